import { h } from './pages.ts';

/**
 * The tabs of one application's pages. Each page group adds its entry here (one line), so the
 * groups that live in files of their own still share one navigation.
 */
const tabs = [
  { id: 'settings', path: '', text: 'Settings and keys' },
  { id: 'users', path: '/users', text: 'Users' },
  { id: 'data', path: '/data', text: 'Data' },
  { id: 'installations', path: '/installations', text: 'Installations' },
  { id: 'push', path: '/push', text: 'Push' },
] as const;

export type AppTab = (typeof tabs)[number]['id'];

export function appNav(appId: string, current: AppTab): string {
  const links = tabs
    .map((tab) => `<a href="/console/apps/${h(appId)}${tab.path}"${tab.id === current ? ' aria-current="page"' : ''}>${tab.text}</a>`)
    .join('');
  return `<nav class="tabs" aria-label="Application">${links}</nav>`;
}
