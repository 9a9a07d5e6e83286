// Waline's flows, through its own client API (@waline/api, what @waline/client calls) and, for what only its
// admin UI does (register, login, profile, user list), the same HTTP calls that UI makes.
import { createRequire } from 'node:module';
import { join } from 'node:path';

function check(condition, message) {
  if (!condition) throw new Error(message);
}

export async function walineFlows({ flow, serverURL, appsDir }) {
  const api = createRequire(join(appsDir, 'package.json'))('@waline/api');
  const lang = 'en';
  const base = { serverURL, lang };
  const ua = 'Mozilla/5.0 (X11; Linux x86_64) Chrome/120.0.0.0';
  const page = '/posts/hello';
  const call = async (method, path, body, token) => {
    const headers = { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) };
    const answer = await fetch(`${serverURL}/api/${path}`, { method, headers, body: body && JSON.stringify(body) });
    const json = await answer.json();
    check(json.errno === 0, `${method} ${path}: errno ${json.errno} ${json.errmsg}`);
    return json.data;
  };
  const add = async (comment, token) => {
    const answer = await api.addComment({ ...base, token, comment: { ua, url: page, link: '', ...comment } });
    check(answer.errno === 0 && answer.data?.objectId, `addComment: ${JSON.stringify(answer)}`);
    return answer.data;
  };
  const list = (options = {}) => api.getComment({ ...base, path: page, page: 1, pageSize: 10, sortBy: 'insertedAt_desc', ...options });
  const ids = (data) => data.map((c) => c.objectId);
  const s = {};

  await flow('waline: anonymous comment is saved and listed', async () => {
    s.first = await add({ nick: 'Ann', mail: 'ann@example.com', comment: 'First!' });
    check(s.first.status === 'approved' && s.first.nick === 'Ann', `saved as ${JSON.stringify(s.first)}`);
    const got = await list();
    check(got.count === 1 && got.data[0]?.objectId === s.first.objectId, `listed ${JSON.stringify(got)}`);
    check(got.data[0].comment === '<p>First!</p>\n' && !('mail' in got.data[0]), `rendered ${JSON.stringify(got.data[0])}`);
  });

  await flow('waline: reply and reply to reply nest under the root comment', async () => {
    s.reply = await add({ nick: 'Bob', mail: 'bob@example.com', comment: 'Reply', pid: s.first.objectId, rid: s.first.objectId, at: 'Ann' });
    s.reply2 = await add({ nick: 'Cy', mail: 'cy@example.com', comment: 'Reply 2', pid: s.reply.objectId, rid: s.first.objectId, at: 'Bob' });
    const got = await list();
    const root = got.data.find((c) => c.objectId === s.first.objectId);
    check(got.count === 3 && got.data.length === 1, `roots ${JSON.stringify(ids(got.data))}, count ${got.count}`);
    check(JSON.stringify(ids(root.children)) === JSON.stringify([s.reply.objectId, s.reply2.objectId]), `children ${ids(root.children)}`);
    check(root.children[1].reply_user?.nick === 'Bob', `reply_user ${JSON.stringify(root.children[1].reply_user)}`);
  });

  await flow('waline: pagination of root comments (newest first, then oldest first)', async () => {
    s.roots = [s.first.objectId];
    for (const n of [2, 3, 4]) s.roots.push((await add({ nick: `N${n}`, mail: `n${n}@example.com`, comment: `Root ${n}` })).objectId);
    const p1 = await list({ pageSize: 3 });
    const p2 = await list({ pageSize: 3, page: 2 });
    check(p1.totalPages === 2 && p1.count === 6, `totalPages ${p1.totalPages}, count ${p1.count}`);
    check(JSON.stringify([...ids(p1.data), ...ids(p2.data)]) === JSON.stringify([...s.roots].reverse()), `pages ${ids(p1.data)} | ${ids(p2.data)}`);
    const liked = await list({ pageSize: 1, sortBy: 'like_desc' });
    check(liked.data.length === 1, `by likes ${ids(liked.data)}`);
    const asc = await list({ pageSize: 2, sortBy: 'insertedAt_asc' });
    check(JSON.stringify(ids(asc.data)) === JSON.stringify(s.roots.slice(0, 2)), `ascending ${ids(asc.data)}`);
  });

  await flow('waline: comment counts per path', async () => {
    s.other = await add({ nick: 'Dee', mail: 'dee@example.com', comment: 'Elsewhere', url: '/posts/other' });
    const counts = await api.fetchCommentCount({ ...base, paths: [page, '/posts/other', '/posts/none'] });
    check(JSON.stringify(counts) === '[6,1,0]', `counts ${JSON.stringify(counts)}`);
  });

  await flow('waline: pageview counter (create, increment, read several paths)', async () => {
    const first = await api.updatePageview({ ...base, path: page });
    const second = await api.updatePageview({ ...base, path: page });
    check(first[0].time === 1 && second[0].time === 2, `pageviews ${JSON.stringify([first, second])}`);
    const got = await api.getPageview({ ...base, paths: [page, '/posts/none'] });
    check(JSON.stringify(got) === '[{"time":2},{"time":0}]', `read ${JSON.stringify(got)}`);
  });

  await flow('waline: reactions and comment likes', async () => {
    await api.updateArticleCounter({ ...base, path: page, type: 'reaction0' });
    await api.updateArticleCounter({ ...base, path: page, type: 'reaction0' });
    await api.updateArticleCounter({ ...base, path: page, type: 'reaction0', action: 'desc' });
    const got = await api.getArticleCounter({ ...base, paths: [page], type: ['reaction0', 'time'] });
    check(JSON.stringify(got) === '[{"reaction0":1,"time":2}]', `counters ${JSON.stringify(got)}`);
    const liked = await api.updateComment({ ...base, token: undefined, objectId: s.first.objectId, comment: { like: true } });
    check(liked.data.like === 1, `like ${liked.data.like}`);
  });

  await flow('waline: register and login, the first user becomes administrator', async () => {
    await call('POST', 'user', { email: 'admin@example.com', password: 'admin-pass-1', display_name: 'Admin', url: 'https://admin.example' });
    s.admin = await call('POST', 'token', { email: 'admin@example.com', password: 'admin-pass-1' });
    check(s.admin.type === 'administrator' && s.admin.token && s.admin.password === null, `admin ${JSON.stringify(s.admin)}`);
    await call('POST', 'user', { email: 'guest@example.com', password: 'guest-pass-1', display_name: 'Guest' });
    s.guest = await call('POST', 'token', { email: 'guest@example.com', password: 'guest-pass-1' });
    check(s.guest.type === 'guest', `second user ${JSON.stringify(s.guest)}`);
    const wrong = await (await fetch(`${serverURL}/api/token`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"email":"guest@example.com","password":"nope"}' })).json();
    check(wrong.errno !== 0, `wrong password accepted: ${JSON.stringify(wrong)}`);
    const me = await call('GET', 'token', undefined, s.guest.token);
    check(me.objectId === s.guest.objectId && me.display_name === 'Guest', `token user ${JSON.stringify(me)}`);
  });

  await flow('waline: logged-in comment carries the user', async () => {
    s.guestComment = await add({ comment: 'From a user', nick: 'ignored', mail: 'guest@example.com' }, s.guest.token);
    const got = await list({ token: s.guest.token });
    const mine = got.data.find((c) => c.objectId === s.guestComment.objectId);
    check(mine?.user_id === s.guest.objectId && mine.nick === 'Guest' && mine.type === 'guest', `listed ${JSON.stringify(mine)}`);
  });

  await flow('waline: user profile update', async () => {
    await call('PUT', 'user', { display_name: 'Guest Renamed', url: 'https://guest.example', label: 'friend' }, s.guest.token);
    const me = await call('GET', 'token', undefined, s.guest.token);
    check(me.display_name === 'Guest Renamed' && me.url === 'https://guest.example' && me.label === 'friend', `profile ${JSON.stringify(me)}`);
    const got = await list();
    const mine = got.data.find((c) => c.objectId === s.guestComment.objectId);
    check(mine?.nick === 'Guest Renamed' && mine.link === 'https://guest.example', `comment author ${JSON.stringify(mine)}`);
  });

  await flow('waline: admin moderation (hide, approve, edit, pin)', async () => {
    const token = s.admin.token;
    const target = s.roots[1];
    await api.updateComment({ ...base, token, objectId: target, comment: { status: 'waiting' } });
    check(!ids((await list()).data).includes(target), 'a waiting comment is listed to visitors');
    const waiting = await call('GET', 'comment?type=list&status=waiting&page=1&pageSize=10', undefined, token);
    check(waiting.waitingCount === 1 && ids(waiting.data).join() === target, `admin waiting list ${JSON.stringify(waiting)}`);
    await api.updateComment({ ...base, token, objectId: target, comment: { status: 'approved' } });
    const edited = await api.updateComment({ ...base, token, objectId: target, comment: { comment: 'Root 2, edited', sticky: 1 } });
    check(edited.data.orig === 'Root 2, edited', `edited ${JSON.stringify(edited.data)}`);
    const got = await list();
    check(got.data[0]?.objectId === target && got.data[0].sticky == 1, `pinned first: ${ids(got.data)}`);
  });

  await flow('waline: non-admin cannot moderate', async () => {
    const answer = await api.updateComment({ ...base, token: s.guest.token, objectId: s.first.objectId, comment: { status: 'spam' } }).catch((e) => e);
    const got = await list();
    check(got.data.find((c) => c.objectId === s.first.objectId)?.status === 'approved', `status after a guest's edit: ${JSON.stringify(answer)}`);
  });

  await flow('waline: admin search and delete (with the replies)', async () => {
    const token = s.admin.token;
    const found = await call('GET', 'comment?type=list&keyword=Reply&page=1&pageSize=10', undefined, token);
    check(JSON.stringify(ids(found.data).sort()) === JSON.stringify([s.reply.objectId, s.reply2.objectId].sort()), `search ${ids(found.data)}`);
    // The JS SDK quotes a keyword as \\Q…\\E; regex characters and CJK text in it match literally.
    const special = await add({ nick: 'Eve', mail: 'eve@example.com', comment: '你好, C++ (v2.0)? [x] $1 ^', url: '/posts/special' });
    for (const keyword of ['C++ (v2.0)?', '[x] $1 ^', '你好']) {
      const hit = await call('GET', `comment?type=list&keyword=${encodeURIComponent(keyword)}&page=1&pageSize=10`, undefined, token);
      check(ids(hit.data).join() === special.objectId, `search ${keyword}: ${ids(hit.data)}`);
    }
    check((await call('GET', 'comment?type=list&keyword=c%2B%2B&page=1&pageSize=10', undefined, token)).data.length === 0, 'a keyword of other case matched ($regex without options is case-sensitive)');
    await api.deleteComment({ ...base, token, objectId: special.objectId });
    await api.deleteComment({ ...base, token, objectId: s.first.objectId });
    const got = await list();
    check(got.count === 4 && !ids(got.data).includes(s.first.objectId), `after delete: count ${got.count}, ${ids(got.data)}`);
    const search = await call('GET', 'comment?type=list&keyword=Reply&page=1&pageSize=10', undefined, token);
    check(search.data.length === 0, `replies left: ${ids(search.data)}`);
  });

  await flow('waline: recent comments', async () => {
    const recent = await api.getRecentComment({ ...base, count: 2 });
    check(Array.isArray(recent.data) && recent.data.length === 2, `recent ${JSON.stringify(recent)}`);
    check(recent.data.map((c) => c.objectId).join() === [s.guestComment.objectId, s.other.objectId].join(), `recent ${ids(recent.data)}`);
    check(recent.data[1].url === '/posts/other' && recent.data[0].nick === 'Guest Renamed', `recent ${JSON.stringify(recent.data)}`);
  });

  await flow('waline: user wall and admin user list', async () => {
    const wall = await api.getUserList({ ...base, pageSize: 10 });
    check(Array.isArray(wall), `user wall ${JSON.stringify(wall)}`);
    const users = await call('GET', 'user?page=1&pageSize=10', undefined, s.admin.token);
    check(users.data.length === 2 && users.data.every((u) => u.email), `admin user list ${JSON.stringify(users)}`);
    await call('PUT', `user/${s.guest.objectId}`, { type: 'administrator' }, s.admin.token);
    const promoted = await call('GET', 'token', undefined, s.guest.token);
    check(promoted.type === 'administrator', `promoted ${promoted.type}`);
  });

  await flow('waline: two-factor login (a field named "2fa")', async () => {
    const speakeasy = createRequire(join(appsDir, 'node_modules/@waline/vercel/package.json'))('speakeasy');
    const { secret } = await call('GET', 'token/2fa', undefined, s.guest.token);
    const code = () => speakeasy.totp({ secret, encoding: 'base32' });
    await call('POST', 'token/2fa', { secret, code: code() }, s.guest.token);
    const enabled = await call('GET', 'token/2fa?email=guest%40example.com');
    check(enabled.enable === true, `2fa after enabling ${JSON.stringify(enabled)}`);
    const without = await (await fetch(`${serverURL}/api/token`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"email":"guest@example.com","password":"guest-pass-1"}' })).json();
    check(without.errno !== 0, 'logged in without the code');
    const login = await call('POST', 'token', { email: 'guest@example.com', password: 'guest-pass-1', code: code() });
    check(login.objectId === s.guest.objectId, `login with the code ${JSON.stringify(login)}`);
  });

  await flow('waline: admin bans a user, who can no longer log in', async () => {
    await call('POST', 'user', { email: 'spammer@example.com', password: 'spam-pass-1', display_name: 'Spammer' });
    const spammer = await call('POST', 'token', { email: 'spammer@example.com', password: 'spam-pass-1' });
    await call('DELETE', `user/${spammer.objectId}`, undefined, s.admin.token);
    const answer = await (await fetch(`${serverURL}/api/token`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"email":"spammer@example.com","password":"spam-pass-1"}' })).json();
    check(answer.errno !== 0, `banned user logged in: ${JSON.stringify(answer)}`);
    const me = await (await fetch(`${serverURL}/api/token`, { headers: { authorization: `Bearer ${spammer.token}` } })).json();
    check(me.errno === 0 && !me.data?.objectId, `banned user's token still works: ${JSON.stringify(me)}`);
  });

  await flow('waline: admin export and re-import of a table (its migration tool)', async () => {
    const token = s.admin.token;
    const dump = await call('GET', 'db', undefined, token);
    check(dump.data.Comment.length === 5 && dump.data.Users.length === 3 && dump.data.Counter.length === 1, `export sizes ${Object.entries(dump.data).map(([k, v]) => `${k}:${v.length}`)}`);
    const comments = dump.data.Comment;
    await call('DELETE', 'db?table=Comment', undefined, token);
    check((await list()).count === 0, 'comments left after the table was emptied');
    for (const item of comments) await call('POST', 'db?table=Comment', { ...item }, token);
    const again = await call('GET', 'db', undefined, token);
    const key = (c) => `${c.insertedAt}|${c.nick}|${c.comment}|${c.status}|${c.url}`;
    check(JSON.stringify(again.data.Comment.map(key).sort()) === JSON.stringify(comments.map(key).sort()), 'the imported comments differ from the exported ones');
    check((await list()).count === 4, `listed after import: ${(await list()).count}`);
  });
}
