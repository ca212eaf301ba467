// The operator console in headless Chromium against the real service (issue 15): a new operator's walk from
// sign-up to a published configuration (with the live preview rendering the real SDK and the re-prompt
// indicator), keyboard-only sign-in and publish, axe-core on every console-core screen, a Viewer who meets
// no enabled control that would be 403, and screenshots at 1280 and 390 px (test-artifacts/console/).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addMember } from '../../src/admin/members.js';
import {
  axeViolations,
  consolePage,
  consoleUrl,
  createOrganization,
  createProject,
  enabledChangeControls,
  newAccount,
  openConsentEditor,
  publish,
  screenshots,
  signIn,
  signUp,
  startConsole,
  writePurposes,
  type ConsoleEnv,
} from './console-harness.js';
import { setupProject } from './harness.js';

let env: ConsoleEnv;
beforeAll(async () => {
  env = await startConsole();
});
afterAll(() => env?.close());

const DRAFT = {
  categories: ['Essential', 'Marketing'],
  purposes: [
    { key: 'necessary', name: 'Necessary', description: 'Keeps the shop and your basket working.', required: true, category: 'Essential' },
    { key: 'analytics', name: 'Analytics', description: 'Counts visits so we know which pages help.', category: 'Marketing' },
  ],
  notice: { title: 'We value your privacy', description: 'We use cookies to run the shop and, with your consent, to measure visits.' },
};

describe('a new operator', () => {
  it('signs up, creates an organization and a project, writes purposes, sees the preview and publishes', async () => {
    const { page, context, problems } = await consolePage(env);
    const account = newAccount();

    await page.goto(consoleUrl(env, '/'));
    await page.waitForURL(/\/console\/sign-in/); // signed out: the gate sends us to sign in
    expect(await axeViolations(page)).toEqual([]);
    await screenshots(page, 'sign-in');
    await page.getByRole('link', { name: 'Create an account' }).click();
    await page.getByRole('heading', { name: 'Create your account' }).waitFor();
    expect(await axeViolations(page)).toEqual([]);
    await screenshots(page, 'sign-up');

    // A too-short password: the API's words, shown, nothing swallowed.
    await page.getByLabel('Name').fill(account.name);
    await page.getByLabel('E-mail').fill(account.email);
    await page.getByLabel('Password').evaluate((input: HTMLInputElement) => input.removeAttribute('minlength'));
    await page.getByLabel('Password').fill('short');
    await page.getByRole('button', { name: 'Create account' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toMatch(/Creating the account failed.*password/i);

    await signUp(page, env, account);
    expect(await axeViolations(page)).toEqual([]);
    await screenshots(page, 'organization-new');
    const orgId = await createOrganization(page, env, 'Acme Shops');
    await page.getByText('No projects yet.').waitFor(); // the empty state
    expect(await axeViolations(page)).toEqual([]);
    await screenshots(page, 'organization-empty');

    const projectId = await createProject(page, 'Web shop');
    const step = (id: string) => page.locator(`[data-step="${id}"]`);
    await expect.poll(() => step('published').getAttribute('class')).toBe('todo');
    expect(await page.locator('pre').first().textContent()).toContain(`${env.serviceUrl}/sdk/v2/consent.js`);
    expect(await axeViolations(page)).toEqual([]);
    await screenshots(page, 'project-home-new');

    await openConsentEditor(page);
    expect(new URL(page.url()).pathname).toBe(`/console/orgs/${orgId}/projects/${projectId}/consent`);
    // An empty draft never published is no good news (a warning, not green); the labels show their defaults;
    // saving and publishing sit side by side at the top.
    const badge = page.locator('[data-status]');
    expect(await badge.textContent()).toBe('Not published yet: add purposes, then publish');
    expect(await badge.getAttribute('class')).toBe('badge warn');
    expect(await page.getByLabel('Accept button').getAttribute('placeholder')).toBe('Accept all');
    expect(await page.getByLabel('Reject button').getAttribute('placeholder')).toBe('Reject all');
    expect(await page.getByLabel('Manage button').getAttribute('placeholder')).toBe('Customise');
    const actions = page.getByRole('region', { name: 'Save and publish' });
    await actions.getByRole('button', { name: 'Save draft' }).waitFor();
    await actions.getByRole('button', { name: 'Publish…' }).waitFor();
    await screenshots(page, 'consent-editor-empty');
    await writePurposes(page, DRAFT);
    // Still in sight at the bottom of the long form (sticky).
    await page.getByLabel('Manage button').fill('Choose');
    await page.evaluate(() => window.scrollTo(0, document.body.scrollHeight));
    const inView = (name: string) =>
      actions.getByRole('button', { name }).evaluate((el) => {
        const box = el.getBoundingClientRect();
        return box.top >= 0 && box.bottom <= window.innerHeight;
      });
    expect(await inView('Save draft')).toBe(true);
    expect(await inView('Publish…')).toBe(true);
    await page.getByLabel('Manage button').fill('');
    // The live preview: the real SDK v2 in the frame renders the saved draft.
    const preview = page.frameLocator('iframe.preview-frame');
    await preview.locator('#consent-sdk-root [data-consent="banner"]').waitFor();
    await expect.poll(() => preview.locator('#consent-sdk-root [data-consent="banner"]').textContent()).toContain('We value your privacy');
    // Typing shows in the preview before saving.
    await page.getByLabel('Title', { exact: true }).fill('Your privacy, your choice');
    await expect.poll(() => preview.locator('#consent-sdk-root [data-consent="banner"]').textContent(), { timeout: 10_000 }).toContain('Your privacy, your choice');
    await page.getByRole('button', { name: 'Save draft' }).click();
    await page.getByText('Draft saved.').waitFor();
    expect(await axeViolations(page)).toEqual([]);
    await screenshots(page, 'consent-editor');

    expect(await publish(page)).toContain('First version');
    await expect.poll(() => page.locator('[data-status]').textContent()).toBe('Version 1 is live and matches the draft');

    // A text visitors agree to changes: publishing would ask them again, and the difference says what.
    const analytics = page.locator('[data-purpose="analytics"]');
    await analytics.getByLabel('Description').fill('Counts visits, anonymously.');
    await page.getByRole('button', { name: 'Save draft' }).click();
    await page.getByText('Draft saved.').waitFor();
    await expect.poll(() => page.locator('.publish-panel > .reprompt').getAttribute('data-reprompt')).toBe('yes');
    expect(await page.locator('.publish-panel > .changes').textContent()).toContain('Purpose “Analytics” (analytics): description');
    await page.getByRole('button', { name: 'Publish…' }).click();
    expect(await axeViolations(page)).toEqual([]);
    await screenshots(page, 'publish-dialog');
    await page.getByRole('dialog').getByRole('button', { name: 'Cancel' }).click();

    // Branding only: visitors keep their choices.
    await analytics.getByLabel('Description').fill('Counts visits so we know which pages help.');
    await page.getByLabel('Colour (#rrggbb)').fill('#7a1f4e');
    await page.getByRole('button', { name: 'Save draft' }).click();
    await page.getByText('Draft saved.').waitFor();
    await expect.poll(() => page.locator('.publish-panel > .reprompt').getAttribute('data-reprompt')).toBe('no');
    expect(await page.locator('.publish-panel > .changes').textContent()).toContain('Colour');
    expect(await publish(page)).toContain('keep their choices');

    // The experience tab: a translation side by side, shown by the preview in that language.
    await page.getByRole('tab', { name: /Experience/ }).click();
    await page.getByLabel('Add a language').fill('de');
    await page.getByRole('button', { name: 'Add', exact: true }).click();
    await page.getByLabel('Notice: Title in de').fill('Ihre Privatsphäre');
    await page.getByLabel('Send Google consent signals (gtag consent default and update)').check();
    await page.getByLabel('analytics_storage needs Analytics').check();
    await page.getByRole('button', { name: 'Save experience' }).click();
    await page.getByText('Experience saved.').waitFor();
    await page.getByLabel('Preview language').selectOption('de');
    await expect.poll(() => preview.locator('#consent-sdk-root [data-consent="banner"]').textContent(), { timeout: 10_000 }).toContain('Ihre Privatsphäre');
    expect(await axeViolations(page)).toEqual([]);
    await screenshots(page, 'consent-experience');
    await expect.poll(() => page.locator('.publish-panel > .reprompt').getAttribute('data-reprompt')).toBe('yes'); // a translated title is agreed to
    expect(await page.locator('.publish-panel > .changes').textContent()).toMatch(/Translations: de/);

    // The project home's checklist follows: published is done.
    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Home' }).click();
    await expect.poll(() => step('published').getAttribute('class')).toBe('done');
    await screenshots(page, 'project-home');

    // Sign out: the cookie is gone, the console asks to sign in again.
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL(/\/console\/sign-in/);
    await page.goto(consoleUrl(env, `/orgs/${orgId}`));
    await page.waitForURL(/\/console\/sign-in\?next=/);
    expect(problems).toEqual([]);
    await context.close();
  }, 300_000);

  it('signs in and publishes with the keyboard alone', async () => {
    const project = await setupProject(env.server);
    const owner = await env.server.services.db.prisma.user.findFirstOrThrow({ where: { memberships: { some: { organization: { projects: { some: { id: project.projectId } } } } } } });
    // setupProject's owner has the harness password; change the draft so there is something to publish.
    const base = `/api/platform/projects/${project.projectId}`;
    const put = await env.server.request('PUT', `${base}/consent/experience`, { token: project.ownerToken, body: { privacyPolicyUrl: 'https://acme.example/privacy' } });
    expect(put.status).toBe(200);
    const { page, context, problems } = await consolePage(env);
    await page.goto(consoleUrl(env, '/sign-in'));
    // The e-mail field has focus on load.
    await expect.poll(() => page.evaluate(() => document.activeElement?.getAttribute('name'))).toBe('email');
    await page.keyboard.type(owner.email);
    await page.keyboard.press('Tab');
    await page.keyboard.type('correct horse battery staple');
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Projects' }).waitFor();

    // Tab to the project link and follow it, then to the Consent link in the navigation.
    const tabTo = async (matches: () => Promise<boolean>, limit = 60) => {
      for (let i = 0; i < limit; i++) {
        await page.keyboard.press('Tab');
        if (await matches()) return;
      }
      throw new Error('never reached with Tab');
    };
    const focused = () => page.evaluate(() => `${document.activeElement?.tagName} ${document.activeElement?.textContent?.trim()}`);
    await tabTo(async () => (await focused()) === 'A Shop');
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Go-live checklist' }).waitFor();
    await tabTo(async () => (await focused()) === 'A Consent');
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Publish' }).waitFor();
    await tabTo(async () => (await focused()) === 'BUTTON Publish…');
    await page.keyboard.press('Enter');
    // The dialog opens with the focus on Publish.
    await expect.poll(focused).toBe('BUTTON Publish');
    await page.keyboard.press('Enter');
    await page.getByText('Version 2 published.').waitFor();
    const versions = await env.server.request('GET', `${base}/consent/versions`, { token: project.ownerToken });
    expect(versions.body.versions.map((v: { number: number }) => v.number)).toEqual([2, 1]);
    expect(problems).toEqual([]);
    await context.close();
  });
});

describe('a Viewer', () => {
  it('sees every console-core screen read-only: no enabled control that would be 403, no 403 answer', async () => {
    const project = await setupProject(env.server);
    const organizationId = (await env.server.services.db.prisma.project.findUniqueOrThrow({ where: { id: project.projectId } })).organizationId;
    const viewer = newAccount('Vera Viewer');
    expect((await env.server.request('POST', '/api/platform/auth/register', { body: viewer })).status).toBe(201);
    await addMember(env.server.services.db, { org: organizationId, email: viewer.email, role: 'VIEWER' });

    const { page, context, problems } = await consolePage(env);
    const refused: string[] = [];
    page.on('response', async (response) => {
      if (response.status() === 403) refused.push(response.url());
      if (response.url().endsWith('/graphql')) {
        const body = await response.text().catch(() => '');
        if (body.includes('"forbidden"')) refused.push(`graphql forbidden: ${body.slice(0, 200)}`);
      }
    });
    await signIn(page, env, viewer);
    const nav = page.getByRole('navigation', { name: 'Console' });
    expect(await nav.getByRole('link', { name: 'Members' }).count()).toBe(0); // Admin or above
    expect(await nav.getByRole('link', { name: 'Audit log' }).count()).toBe(0);
    expect(await page.getByLabel('Project name').count()).toBe(0);
    expect(await enabledChangeControls(page, /^$/)).toEqual([]);
    await page.getByRole('link', { name: 'Shop' }).click();
    await page.getByRole('heading', { name: 'Go-live checklist' }).waitFor();
    expect(await enabledChangeControls(page, /^Copy: /)).toEqual([]);
    await openConsentEditor(page);
    await page.getByRole('note').filter({ hasText: 'You are a Viewer' }).waitFor();
    const readOnly = /^(Purposes and notice|Experience)$/; // the tabs only switch what is shown
    expect(await enabledChangeControls(page, readOnly)).toEqual([]);
    expect(await page.getByRole('button', { name: /Save|Publish/ }).count()).toBe(0);
    // Its fields look disabled, not editable: greyed, dashed, the not-allowed cursor.
    const look = await page.getByLabel('Title', { exact: true }).evaluate((el) => {
      const style = getComputedStyle(el);
      return { border: style.borderTopStyle, cursor: style.cursor, color: style.color, background: style.backgroundColor };
    });
    expect(look).toEqual({ border: 'dashed', cursor: 'not-allowed', color: 'rgb(90, 100, 112)', background: 'rgb(236, 238, 241)' });
    await page.getByRole('tab', { name: 'Experience' }).click();
    expect(await enabledChangeControls(page, readOnly)).toEqual([]);
    expect(await axeViolations(page)).toEqual([]);
    await screenshots(page, 'consent-editor-viewer');
    expect(refused).toEqual([]);
    expect(problems).toEqual([]);
    await context.close();
  });
});
