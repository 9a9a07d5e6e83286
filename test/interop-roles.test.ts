// Roles (issue #16 point 2) through the official JavaScript SDK (npm leancloud-storage): AV.Role with its
// ACL, role.getUsers().add(user) and role.getRoles().add(child), AV.ACL#setRoleReadAccess and
// setRoleWriteAccess, and user.getRoles(). Before: every _Role request failed 400 code 1
// "Not supported yet: roles (_Role)."
import { test } from 'node:test';
import assert from 'node:assert/strict';
import AV from 'leancloud-storage';
import { rejection, sdkServer } from './helpers/sdk.ts';

sdkServer();

let users = 0;
async function signUp(): Promise<AV.User> {
  const user = new AV.User();
  user.setUsername(`sdk_role_user_${++users}_${Date.now()}`);
  user.setPassword('secret-password');
  return user.signUp();
}

function publicReadAcl(): AV.ACL {
  const acl = new AV.ACL();
  acl.setPublicReadAccess(true);
  return acl;
}

test('a role needs an ACL; saved with one, its name and both relations read back', async () => {
  // The typings ask for an ACL; JavaScript callers may leave it out, as the SDK's own test does.
  const refused = await rejection(new AV.Role('SdkNoAcl', undefined as unknown as AV.ACL).save());
  assert.deepEqual([refused.code, refused.message], [1, 'Role ACL is required.']);
  const role = await new AV.Role('SdkStaff', publicReadAcl()).save();
  const fetched = await new AV.Query(AV.Role).get(role.id as string);
  assert.equal(fetched.getName(), 'SdkStaff');
  assert.equal(fetched.getUsers().targetClassName, '_User');
  assert.equal(fetched.getRoles().targetClassName, '_Role');
  const duplicate = await rejection(new AV.Role('SdkStaff', publicReadAcl()).save());
  assert.equal(duplicate.code, 137);
});

test('setRoleReadAccess and setRoleWriteAccess grant the users of the role, and of roles in its roles', async () => {
  const member = await signUp();
  const nested = await signUp();
  const editors = new AV.Role('SdkEditors', publicReadAcl());
  editors.getUsers().add(member);
  await editors.save(null, { useMasterKey: true });
  const chiefs = new AV.Role('SdkChiefs', publicReadAcl());
  chiefs.getUsers().add(nested);
  await chiefs.save(null, { useMasterKey: true });
  // To give Chiefs what Editors have, Chiefs go into Editors' roles.
  editors.getRoles().add(chiefs);
  await editors.save(null, { useMasterKey: true });

  const acl = new AV.ACL();
  acl.setRoleReadAccess(editors, true);
  acl.setRoleWriteAccess('SdkEditors', true);
  const draft = await new AV.Object('SdkDraft', { text: 'v1', ACL: acl }).save(null, { useMasterKey: true });

  let text = 'v1';
  for (const user of [member, nested]) {
    await AV.User.become(user.getSessionToken());
    const read = await new AV.Query('SdkDraft').get(draft.id as string);
    assert.equal(read.get('text'), text);
    text = `by ${user.getUsername()}`;
    assert.equal(await new AV.Query('SdkDraft').count(), 1);
    read.set('text', text);
    await read.save();
  }
  const outsider = await signUp();
  const notFound = await rejection(new AV.Query('SdkDraft').get(draft.id as string));
  assert.equal(notFound.code, 101);
  const object = AV.Object.createWithoutData('SdkDraft', draft.id as string);
  object.set('text', 'by an outsider');
  const denied = await rejection(object.save());
  assert.deepEqual([denied.code, denied.message], [403, "Forbidden writing by object's ACL."]);
  assert.ok(outsider.id);
});

test('user.getRoles() lists the roles holding the user directly; a removed user loses access at once', async () => {
  const user = await signUp();
  const team = new AV.Role('SdkTeam', publicReadAcl());
  team.getUsers().add(user);
  await team.save(null, { useMasterKey: true });
  const parent = new AV.Role('SdkTeamParent', publicReadAcl());
  parent.getRoles().add(team);
  await parent.save(null, { useMasterKey: true });
  const roles = await user.getRoles();
  assert.deepEqual(roles.map((role) => role.getName()), ['SdkTeam']);

  const acl = new AV.ACL();
  acl.setRoleReadAccess('SdkTeamParent', true);
  const memo = await new AV.Object('SdkMemo', { n: 1, ACL: acl }).save(null, { useMasterKey: true });
  await AV.User.become(user.getSessionToken());
  assert.equal((await new AV.Query('SdkMemo').get(memo.id as string)).get('n'), 1);
  team.getUsers().remove(user);
  await team.save(null, { useMasterKey: true });
  assert.equal((await rejection(new AV.Query('SdkMemo').get(memo.id as string))).code, 101);
  assert.deepEqual(await user.getRoles(), []);
});
