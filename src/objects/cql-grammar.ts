import type peggy from 'peggy';
import { onFirstUse } from '../lib/on-first-use.ts';

const peggyPackage = onFirstUse<typeof peggy>('peggy');

/**
 * The grammar of CQL (the hosted service's "CQL 详细指南": select with where, order by, limit, count,
 * include, subqueries, relations and geo; insert, update and delete of one object by its objectId), as a peggy grammar compiled on first use. It
 * only builds a syntax tree (src/objects/cql.ts turns that into a REST query); values stay tagged
 * nodes, and a `?` keeps its offset so placeholders are numbered in the order they are written,
 * whatever the parser tried and gave up before.
 */
const grammar = String.raw`
Statement
  = _ statement:(Select / Insert / Update / Delete) _ ";"? _ !. { return statement; }

Insert
  = InsertKw __ IntoKw __ className:ClassName _ "(" _ columns:Fields _ ")" _ ValuesKw _ rows:Rows {
      return { type: 'insert', className, columns, rows };
    }

Fields
  = head:FieldPath tail:(_ "," _ f:FieldPath { return f; })* { return [head, ...tail]; }

Rows
  = head:Row tail:(_ "," _ r:Row { return r; })* { return [head, ...tail]; }

Row
  = "(" _ values:Values _ ")" { return values; }

Update
  = UpdateKw __ className:ClassName __ SetKw __ sets:Assignments __ WhereKw __ where:Or {
      return { type: 'update', className, sets, where };
    }

Assignments
  = head:Assignment tail:(_ "," _ a:Assignment { return a; })* { return [head, ...tail]; }

Assignment
  = path:FieldPath _ "=" _ value:Value { return { path, value }; }

Delete
  = DeleteKw __ FromKw __ className:ClassName __ WhereKw __ where:Or { return { type: 'delete', className, where }; }

Select
  = SelectKw __ columns:Columns __ FromKw __ className:ClassName tail:Tail {
      return { type: 'select', columns, className, ...tail };
    }

Tail
  = where:(__ WhereKw __ w:Or { return w; })? rest:(OrderThenLimit / LimitThenOrder) {
      return { where, ...rest };
    }

LimitThenOrder
  = limit:(__ l:Limit { return l; })? order:(__ o:OrderBy { return o; })? { return { limit, order }; }

OrderThenLimit
  = order:(__ o:OrderBy { return o; }) limit:(__ l:Limit { return l; })? { return { limit, order }; }

Columns
  = head:Column tail:(_ "," _ c:Column { return c; })* { return [head, ...tail]; }

Column
  = "*" { return { kind: 'all' }; }
  / CountKw _ "(" _ ("*" / "objectId") _ ")" { return { kind: 'count' }; }
  / IncludeKw __ path:FieldPath { return { kind: 'include', path }; }
  / path:FieldPath { return { kind: 'field', path }; }

Limit
  = LimitKw __ first:Count second:(_ "," _ c:Count { return c; })? {
      return second === null ? { skip: null, count: first } : { skip: first, count: second };
    }

Count "a whole number or ?"
  = Placeholder
  / digits:$[0-9]+ { return { v: 'lit', value: Number(digits) }; }

OrderBy
  = OrderKw __ ByKw __ head:OrderKey tail:(_ "," _ k:OrderKey { return k; })* direction:(__ d:Direction { return d; })? {
      return { keys: [head, ...tail], direction: direction ?? 'asc' };
    }

OrderKey
  = sign:[+-]? _ path:FieldPath { return { sign, path }; }

Direction
  = AscKw { return 'asc'; }
  / DescKw { return 'desc'; }

Or
  = head:And tail:(__ OrKw __ a:And { return a; })* { return tail.length ? { type: 'or', items: [head, ...tail] } : head; }

And
  = head:Primary tail:(__ AndKw __ p:Primary { return p; })* { return tail.length ? { type: 'and', items: [head, ...tail] } : head; }

Primary
  = "(" _ inner:Or _ ")" { return inner; }
  / Condition

Condition
  = RelatedKw __ key:Field __ ToKw __ object:Value { return { type: 'related', key, object }; }
  / SizeKw _ "(" _ path:FieldPath _ ")" _ "=" _ value:Value { return { type: 'size', path, value }; }
  / path:FieldPath __ IsKw __ not:(NotKw __)? ExistsKw { return { type: 'exists', path, exists: !not }; }
  / path:FieldPath __ IsKw __ not:(NotKw __)? NullKw { return { type: 'compare', path, op: not ? '!=' : '=', value: { v: 'lit', value: null } }; }
  / path:FieldPath __ not:(NotKw __)? InKw _ "(" _ select:Select _ ")" { return { type: 'inSelect', path, not: !!not, select }; }
  / path:FieldPath __ not:(NotKw __)? InKw _ "(" _ values:Values _ ")" { return { type: 'in', path, not: !!not, values }; }
  / path:FieldPath __ AllKw _ "(" _ values:Values _ ")" { return { type: 'all', path, values }; }
  / path:FieldPath __ not:(NotKw __)? op:(LikeKw / RegexpKw) __ value:Value {
      return { type: op, path, not: !!not, value };
    }
  / path:FieldPath __ NearKw __ point:Point min:(__ MinKw __ d:Distance { return d; })? max:(__ MaxKw __ d:Distance { return d; })? {
      return { type: 'near', path, point, min, max };
    }
  / path:FieldPath __ WithinKw __ southwest:Point __ AndKw __ northeast:Point { return { type: 'within', path, southwest, northeast }; }
  / path:FieldPath _ op:Comparison _ "(" _ select:Select _ ")" { return { type: 'compareSelect', path, op, select }; }
  / path:FieldPath _ op:Comparison _ value:Value { return { type: 'compare', path, op, value }; }

Comparison "a comparison (=, !=, <>, <, <=, >, >=)"
  = "<>" { return '!='; } / "!=" / "<=" / ">=" / "=" / "<" / ">"

Distance
  = value:Value unit:(_ u:Unit { return u; })? { return { value, unit: unit ?? 'radians' }; }

Unit
  = KmKw { return 'km'; } / MilesKw { return 'miles'; } / RadiansKw { return 'radians'; }

Point "a geopoint"
  = "[" _ longitude:Value _ "," _ latitude:Value _ "]" { return { v: 'fn', name: 'geopoint', args: [longitude, latitude] }; }
  / Value

Values
  = head:Value tail:(_ "," _ v:Value { return v; })* { return [head, ...tail]; }

Value "a value"
  = Placeholder
  / String
  / Number
  / TrueKw { return { v: 'lit', value: true }; }
  / FalseKw { return { v: 'lit', value: false }; }
  / NullKw { return { v: 'lit', value: null }; }
  / name:$Identifier _ "(" _ args:(Values)? _ ")" { return { v: 'fn', name: name.toLowerCase(), args: args ?? [] }; }
  / "[" _ items:(Values)? _ "]" { return { v: 'array', items: items ?? [] }; }
  / "{" _ entries:(Entries)? _ "}" { return { v: 'object', entries: entries ?? [] }; }

Entries
  = head:Entry tail:(_ "," _ e:Entry { return e; })* { return [head, ...tail]; }

Entry
  = key:(s:String { return s.value; } / $Identifier) _ ":" _ value:Value { return [key, value]; }

Placeholder
  = "?" { return { v: 'param', offset: offset() }; }

String "a string"
  = "'" chars:(SingleChar)* "'" { return { v: 'lit', value: chars.join('') }; }
  / '"' chars:(DoubleChar)* '"' { return { v: 'lit', value: chars.join('') }; }

SingleChar
  = "''" { return "'"; }
  / "\\" c:Escaped { return c; }
  / [^'\\]

DoubleChar
  = '""' { return '"'; }
  / "\\" c:Escaped { return c; }
  / [^"\\]

Escaped
  = "n" { return '\n'; }
  / "t" { return '\t'; }
  / "r" { return '\r'; }
  / c:. { return c; }

Number "a number"
  = text:$("-"? [0-9]+ ("." [0-9]+)? ([eE] [+-]? [0-9]+)?) !IdentChar { return { v: 'lit', value: Number(text) }; }

ClassName "a class name"
  = $Identifier

FieldPath "a key"
  = head:Field tail:("." f:Field { return f; })* { return [head, ...tail]; }

Field
  = !(Reserved !IdentChar) name:$Identifier { return name; }
  / "${'`'}" name:$[^${'`'}]+ "${'`'}" { return name; }

Identifier
  = [A-Za-z_$] IdentChar*

IdentChar
  = [A-Za-z0-9_$]

Reserved
  = SelectKw / FromKw / WhereKw / AndKw / OrKw / NotKw / InKw / IsKw / LimitKw / OrderKw / ByKw
  / LikeKw / RegexpKw / ExistsKw / AllKw / NearKw / WithinKw / RelatedKw / IncludeKw

SelectKw = "select"i !IdentChar
InsertKw = "insert"i !IdentChar
IntoKw = "into"i !IdentChar
ValuesKw = "values"i !IdentChar
UpdateKw = "update"i !IdentChar
SetKw = "set"i !IdentChar
DeleteKw = "delete"i !IdentChar
FromKw = "from"i !IdentChar
WhereKw = "where"i !IdentChar
AndKw = "and"i !IdentChar
OrKw = "or"i !IdentChar
NotKw = "not"i !IdentChar
InKw = "in"i !IdentChar
IsKw = "is"i !IdentChar
AllKw = "all"i !IdentChar
LimitKw = "limit"i !IdentChar
OrderKw = "order"i !IdentChar
ByKw = "by"i !IdentChar
AscKw = "asc"i !IdentChar
DescKw = "desc"i !IdentChar
LikeKw = "like"i !IdentChar { return 'like'; }
RegexpKw = "regexp"i !IdentChar { return 'regexp'; }
ExistsKw = "exists"i !IdentChar
CountKw = "count"i !IdentChar
IncludeKw = "include"i !IdentChar
SizeKw = "size"i !IdentChar
NearKw = "near"i !IdentChar
WithinKw = "within"i !IdentChar
MinKw = "min"i !IdentChar
MaxKw = "max"i !IdentChar
KmKw = "km"i !IdentChar
MilesKw = "miles"i !IdentChar
RadiansKw = "radians"i !IdentChar
RelatedKw = "related"i !IdentChar
ToKw = "to"i !IdentChar
TrueKw = "true"i !IdentChar
FalseKw = "false"i !IdentChar
NullKw = "null"i !IdentChar

_ "whitespace"
  = [ \t\r\n]*

__ "whitespace"
  = [ \t\r\n]+
`;

let parser: peggy.Parser | undefined;

/** Compiled on first use, not at load: compiling costs about 0.25 s of CPU, which every server start and CLI run paid though few apps send CQL. */
export function cqlParser(): peggy.Parser {
  parser ??= peggyPackage().generate(grammar);
  return parser;
}

export interface CqlSyntaxError {
  message: string;
  location: { start: { offset: number; line: number; column: number } };
  expected: Array<{ type: string; text?: string; description?: string }> | null;
}

export function isCqlSyntaxError(error: unknown): error is CqlSyntaxError {
  return parser !== undefined && error instanceof parser.SyntaxError;
}
