import { ApiError, fail } from '../lib/errors.ts';
import { dictionary, own } from '../lib/lookup.ts';
import type { FieldSchema, FieldType, SchemaStore } from '../storage/schema-store.ts';
import { builtInFieldTypes, printedType, sameType, serverFieldTypes, typeOfValue, writtenBy, type Written } from './field-types.ts';
import type { Operation } from './ops.ts';
import type { Json, JsonObject } from './types.ts';
import { parseSchemaChanges } from './schema-changes.ts';
import { checkClassName } from './values.ts';

/** A field as GET /1.1/schemas shows it. */
export interface ShownField {
  type: string;
  className?: string;
  default?: Json;
}

interface ClassEntry {
  /** Fields whose type this node has seen kept: a type never changes, so this never goes stale. */
  known: Map<string, FieldType>;
  defaults: Map<string, Json>;
  /** When `defaults` (and the fields other nodes added) were last read; 0: never. */
  loadedAt: number;
  reading: Promise<void> | null;
  /** The Relation fields of `known` (and the built-in ones) by name, with the class each relates to; null: to be worked out again. */
  relations: Readonly<Record<string, string>> | null;
}

/** Classes whose fields one node remembers; past this the memory starts over (types are only re-read). */
const maxCachedClasses = 10_000;

function mismatch(name: string, kept: FieldType, written: FieldType): ApiError {
  return new ApiError('incorrectType', `Invalid value type for field '${name}',expect type is ${printedType(kept)},but it is '${printedType(written)}'.`);
}

/**
 * The schema of each class, learned from the writes: a field's type is the type it was first written
 * with, on whichever node, and a write of another type is refused (111). null and Delete are allowed on
 * any type. The types this node has seen are remembered, so a write of known fields costs no round
 * trip; a new field costs one statement, which also tells a node that lost a race the winner's type.
 * Defaults and the fields other nodes added are re-read at most every `cacheMs`.
 */
export class ClassSchemas {
  private readonly store: SchemaStore;
  private readonly now: () => number;
  private readonly cacheMs: number;
  private readonly classExists: (appId: string, className: string) => Promise<boolean>;
  private readonly cache = new Map<string, ClassEntry>();

  constructor(options: {
    store: SchemaStore;
    now: () => number;
    cacheMs: number;
    classExists: (appId: string, className: string) => Promise<boolean>;
  }) {
    this.store = options.store;
    this.now = options.now;
    this.cacheMs = options.cacheMs;
    this.classExists = options.classExists;
  }

  /** Refuses (111) operations that write a field with another type than its own; learns the new fields. */
  async checkOperations(appId: string, className: string, operations: Operation[]): Promise<void> {
    await this.check(appId, className, operations.map((op) => [op.path[0], writtenBy(op)]));
  }

  /** checkOperations for the fields of an object about to be created. */
  async checkData(appId: string, className: string, data: JsonObject): Promise<void> {
    await this.check(
      appId,
      className,
      Object.entries(data).map(([name, value]) => [name, { type: typeOfValue(value), isNull: value === null }]),
    );
  }

  /** The data of a new object with the class's defaults for the fields it leaves out. */
  async withDefaults(appId: string, className: string, data: JsonObject): Promise<JsonObject> {
    const { defaults } = await this.loaded(appId, className);
    if (defaults.size === 0) return data;
    // Defaults first, then the fields given: the hosted service merged the object into its class's defaults
    // (R:Objects/Relational Data: a Person saved with pname reads back company, pname).
    const filled: JsonObject = {};
    for (const [name, value] of defaults) if (own(data, name) === undefined) filled[name] = structuredClone(value);
    return { ...filled, ...data };
  }

  /**
   * The class's Relation fields and the class each relates to (every read's descriptors, a where's
   * relation fields): the schema is their one record (migration 0014).
   */
  async relationFields(appId: string, className: string): Promise<Readonly<Record<string, string>>> {
    const entry = await this.loaded(appId, className);
    if (entry.relations === null) {
      const relations = dictionary<string>();
      for (const [name, type] of this.typesOf(className, entry.known)) {
        if (type.type === 'Relation' && type.className !== undefined) relations[name] = type.className;
      }
      entry.relations = relations;
    }
    return entry.relations;
  }

  /**
   * What a write's relation changes made of their fields, known on this node at once (a relation op
   * that fixed a field did so in the store, in the write's own transaction: src/storage/sql/relation-store.ts).
   */
  knowRelations(appId: string, className: string, changes: ReadonlyArray<{ key: string; targetClass: string }>): void {
    if (changes.length === 0) return;
    const entry = this.entry(appId, className);
    for (const { key, targetClass } of changes) {
      if (!entry.known.has(key)) entry.known.set(key, { type: 'Relation', className: targetClass });
    }
    entry.relations = null;
  }

  /** Every field's type as this node knows it (built-in ones included), re-read at most every cacheMs. */
  async fieldTypes(appId: string, className: string): Promise<Map<string, FieldType>> {
    return new Map(this.typesOf(className, (await this.loaded(appId, className)).known));
  }

  /** GET /1.1/schemas/<className>: null when the class has neither fields nor objects. */
  async describe(appId: string, className: string): Promise<Record<string, ShownField> | null> {
    checkClassName(className);
    const fields = await this.store.fields(appId, className);
    if (fields.length === 0 && builtInFieldTypes[className] === undefined && !(await this.classExists(appId, className))) return null;
    return shown(className, fields);
  }

  /** GET /1.1/schemas: every class with fields, and the built-in classes, by name. */
  async describeAll(appId: string): Promise<Record<string, Record<string, ShownField>>> {
    const classes = await this.store.classes(appId);
    for (const className of ['_User', '_Role', '_Installation']) if (!classes.has(className)) classes.set(className, []);
    const all = dictionary<Record<string, ShownField>>();
    for (const className of [...classes.keys()].sort()) all[className] = shown(className, classes.get(className)!);
    return all;
  }

  /**
   * Declares types and sets defaults, with the master key: `{"<field>": {"type": "Pointer", "className":
   * "Post"}, "<field>": {"default": <value>}}`; `"default": null` clears one. Answers the class as describe does.
   */
  async update(appId: string, className: string, body: unknown): Promise<Record<string, ShownField>> {
    checkClassName(className);
    const changes = parseSchemaChanges(className, body);
    const declared = changes.filter((change) => change.type !== undefined);
    await this.check(appId, className, declared.map((change) => [change.name, { type: change.type!, isNull: false }]));
    for (const change of changes) {
      if (change.default === undefined) continue;
      // check() kept the field above whenever the change declared or implied a type.
      await this.store.setDefault(appId, className, change.name, change.default ?? undefined);
    }
    this.entry(appId, className).loadedAt = 0;
    return (await this.describe(appId, className))!;
  }

  private async check(appId: string, className: string, writes: Array<[string, Written]>): Promise<void> {
    const builtIn = builtInFieldTypes[className];
    const entry = this.entry(appId, className);
    // One type a field: a write touching it twice ("x" and "x.y") offers the first, and the other is checked against it.
    let unknown: Map<string, { name: string; type: FieldType }> | null = null;
    for (const [name, written] of writes) {
      if (written === null || builtIn?.has(name) || entry.known.has(name) || unknown?.has(name)) continue;
      (unknown ??= new Map()).set(name, { name, type: written.type });
    }
    if (unknown !== null) {
      const kept = await this.store.learn(appId, className, [...unknown.values()]);
      for (const [name, type] of kept) entry.known.set(name, type);
      entry.relations = null;
    }
    for (const [name, written] of writes) {
      if (written === null || written.isNull) continue;
      const kept = builtIn?.get(name) ?? entry.known.get(name);
      // A relation to another class than the field's is the relations' own refusal (128, src/objects/relations.ts).
      if (kept?.type === 'Relation' && written.type.type === 'Relation') continue;
      if (kept !== undefined && !sameType(kept, written.type)) throw mismatch(name, kept, written.type);
    }
  }

  private entry(appId: string, className: string): ClassEntry {
    const key = `${appId}\u0000${className}`;
    let entry = this.cache.get(key);
    if (entry === undefined) {
      if (this.cache.size >= maxCachedClasses) this.cache.clear();
      entry = { known: new Map(), defaults: new Map(), loadedAt: 0, reading: null, relations: null };
      this.cache.set(key, entry);
    }
    return entry;
  }

  private async loaded(appId: string, className: string): Promise<ClassEntry> {
    const entry = this.entry(appId, className);
    const now = this.now();
    if (entry.loadedAt !== 0 && now - entry.loadedAt < this.cacheMs) return entry;
    // Requests arriving while the class is read share that one read.
    entry.reading ??= this.store.fields(appId, className).then(
      (fields) => {
        entry.defaults = new Map();
        for (const field of fields) {
          entry.known.set(field.name, field.type);
          entry.relations = null;
          if (field.default !== undefined) entry.defaults.set(field.name, field.default);
        }
        entry.loadedAt = now;
        entry.reading = null;
      },
      (error: unknown) => {
        entry.reading = null;
        throw error;
      },
    );
    await entry.reading;
    return entry;
  }

  private typesOf(className: string, known: Map<string, FieldType>): Array<[string, FieldType]> {
    return [...(builtInFieldTypes[className] ?? []), ...known];
  }
}

function shownType(type: FieldType, value?: Json): ShownField {
  const field: ShownField = { type: type.type };
  if (type.className !== undefined) field.className = type.className;
  if (value !== undefined) field.default = value;
  return field;
}

function shown(className: string, fields: FieldSchema[]): Record<string, ShownField> {
  const out = dictionary<ShownField>();
  for (const [name, type] of serverFieldTypes) out[name] = shownType(type);
  for (const [name, type] of builtInFieldTypes[className] ?? []) out[name] = shownType(type);
  for (const field of fields) out[field.name] = shownType(field.type, field.default);
  return out;
}
