/**
 * The operator's dashboard (GET /dashboard): a sign-in form, then the panels, each refreshing itself over the
 * gateway's public GraphQL API. Only admins see the panels: the API answers FORBIDDEN to anyone else, and the page
 * says so.
 */
import { ApiError, gql, session } from './api.js';
import { h } from './dom.js';
import { Panel, type PanelSpec } from './panel.js';
import { adsPanel } from './panels/ads.js';
import { cachesPanel } from './panels/caches.js';
import { livePanel } from './panels/live.js';
import { searchPanel } from './panels/search.js';
import { logsPanel } from './panels/logs.js';
import { queuesPanel } from './panels/queues.js';
import { requestsPanel } from './panels/requests.js';
import { slowestPanel } from './panels/slowest.js';
import { visitsPanel } from './panels/visits.js';
import './style.css';

const app = document.getElementById('app')!;
let panels: Panel[] = [];

/** The viewer, when the token is still good and names an admin; FORBIDDEN (an ApiError) for others. */
async function whoAmI(): Promise<string> {
  // `queues` is for admins only: the API itself decides who sees the dashboard.
  const { me } = await gql<{ me: { username: string } | null; queues: unknown[] }>(
    'query DashboardViewer { me { username } queues { name } }',
  );
  if (!me) throw new ApiError('sign in first', 'UNAUTHENTICATED');
  return me.username;
}

function signInForm(message?: { text: string; code?: string }): void {
  stopPanels();
  const username = h('input', { name: 'username', autocomplete: 'username', required: true, autofocus: true });
  const password = h('input', { name: 'password', type: 'password', autocomplete: 'current-password', required: true });
  const button = h('button', { type: 'submit' }, 'Sign in');
  const alert = h('p', { className: 'error', role: 'alert', 'data-code': message?.code ?? '' }, message?.text ?? '');
  const form = h(
    'form',
    { className: 'sign-in', 'aria-label': 'sign in' },
    h('h2', {}, 'Sign in'),
    h('p', {}, 'The dashboard is for admins of this gateway.'),
    h('label', {}, 'Username', username),
    h('label', {}, 'Password', password),
    button,
    alert,
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    button.disabled = true;
    void signIn(username.value, password.value).catch((err: unknown) => {
      button.disabled = false;
      const error = err as ApiError;
      alert.dataset.code = error.code ?? '';
      alert.textContent = refusal(error, username.value);
    });
  });
  app.replaceChildren(form);
}

/** What the page says when signing in did not open the dashboard. */
function refusal(error: ApiError, username: string): string {
  if (error.code === 'FORBIDDEN')
    return `${username} is not an admin, so the dashboard is closed to them (the API said: ${error.message}). An admin can grant it: npm run admin -- grant ${username}, or the grantAdmin mutation.`;
  if (error.code === 'UNAUTHENTICATED' || error.code === 'BAD_USER_INPUT') return `Could not sign in: ${error.message}`;
  return `Could not sign in: ${error.message}${error.code ? ` (${error.code})` : ''}`;
}

async function signIn(username: string, password: string): Promise<void> {
  session.token = null;
  const { signIn } = await gql<{ signIn: { token: string } }>(
    'mutation DashboardSignIn($username: String!, $password: String!) { signIn(username: $username, password: $password) { token } }',
    { username, password },
  );
  session.token = signIn.token;
  try {
    showDashboard(await whoAmI());
  } catch (err) {
    await signOut();
    throw err;
  }
}

async function signOut(): Promise<void> {
  try {
    if (session.token) await gql('mutation DashboardSignOut { signOut }');
  } catch {
    // the token is dropped anyway
  } finally {
    session.token = null;
  }
}

function stopPanels(): void {
  for (const panel of panels) panel.stop();
  panels = [];
}

function showDashboard(username: string): void {
  stopPanels();
  const ended = (error: ApiError) => {
    session.token = null;
    signInForm({ text: `Your session ended: ${error.message}`, code: error.code });
  };
  const specs: ((refresh: () => void) => PanelSpec)[] = [
    requestsPanel,
    slowestPanel,
    queuesPanel,
    logsPanel,
    visitsPanel,
    searchPanel,
    adsPanel,
    livePanel,
    cachesPanel,
  ];
  panels = specs.map((spec) => {
    let panel: Panel | undefined = undefined;
    panel = new Panel(
      spec(() => panel?.refresh()),
      ended,
    );
    return panel;
  });
  const out = h('button', { type: 'button', className: 'sign-out' }, 'Sign out');
  out.addEventListener('click', () => void signOut().then(() => signInForm()));
  app.replaceChildren(
    h('p', { className: 'viewer' }, 'Signed in as ', h('b', { 'data-viewer': username }, username), ' ', out),
    h('div', { className: 'panels' }, ...panels.map((p) => p.element)),
  );
  for (const panel of panels) panel.refresh();
}

// A hidden tab asks nothing; shown again, every panel refreshes at once.
document.addEventListener('visibilitychange', () => {
  if (document.visibilityState === 'visible') for (const panel of panels) panel.refresh();
});

if (session.token === null) signInForm();
else
  whoAmI().then(showDashboard, (err: unknown) => {
    session.token = null;
    signInForm({ text: refusal(err as ApiError, 'this user'), code: (err as ApiError).code });
  });
