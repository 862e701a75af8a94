/**
 * The Sandbox inbox in chromium: the empty state without a sandbox channel, then mail sent
 * through sandbox channels listed as an inbox (newest first; sender, recipients, subject, time), a second channel chosen,
 * a message opened with its rendered HTML and its simulated events (a delivery and a bounce);
 * axe and screenshots.
 */
import { describe, expect, it } from 'vitest';
import type { Sender } from '../support/sending.js';
import { useRig } from './harness.js';
import { sendMail } from './mail-fixtures.js';

const rig = useRig();

const inbox = () => rig.page.getByRole('region', { name: 'Inbox' });

describe('sandbox inbox', () => {
  it('says how to get mail into it when the account has no sandbox channel', async () => {
    await rig.visit('/sandbox');
    await rig.page.getByRole('heading', { name: 'No sandbox channel yet' }).waitFor();
    await rig.checkA11y();
    await rig.screenshot('sandbox-empty');
  });

  let first: Sender;
  let second: Sender;

  it("lists a sandbox channel's mail as an inbox and shows a message rendered with its simulated events", async () => {
    first = await rig.sender();
    second = await rig.sender();
    await sendMail(rig, first, { subject: 'Welcome aboard', html: '<h1>Welcome</h1><p>Glad you are here.</p>', text: 'Welcome' });
    const id = await sendMail(rig, first, {
      subject: 'Password reset',
      to: [{ email: 'reader@inbox-demo.net' }, { email: 'gone@bounce.postrider.invalid' }],
      html: '<p>Reset it <a href="https://app.inbox-demo.net/reset">here</a>.</p>',
      text: 'Reset it',
    });
    await sendMail(rig, second, { subject: 'Other channel mail' });
    const page = rig.page;
    await rig.visit(`/sandbox?channelId=${first.channelId}`);
    await inbox().getByText('Password reset').waitFor();
    await inbox().getByText('Welcome aboard').waitFor();
    expect(await inbox().getByText('Other channel mail').count()).toBe(0);
    await expect.poll(() => inbox().getByText(`Demo App <app@${first.domain}>`).count()).toBe(2);
    // Newest first, each with its recipients.
    const links = inbox().getByRole('link');
    expect(await links.nth(0).textContent()).toContain('Password reset');
    expect(await links.nth(1).textContent()).toContain('Welcome aboard');
    await inbox().getByText('To: reader@inbox-demo.net, gone@bounce.postrider.invalid').waitFor();
    await inbox().getByRole('link', { name: /Password reset/ }).click();
    expect(new URL(page.url()).pathname).toBe(`/dashboard/sandbox/${id}`);
    const pane = page.getByRole('region', { name: 'Message' });
    await pane.getByRole('heading', { level: 2, name: 'Password reset' }).waitFor();
    const events = pane.getByRole('region', { name: 'Events' });
    await events.getByText('delivered', { exact: true }).waitFor();
    await events.getByText('bounced', { exact: true }).waitFor();
    await events.getByText('550 5.1.1 simulated bounce (sandbox)').waitFor();
    await pane.getByText('A sandbox channel delivers nothing').waitFor();
    await page.frameLocator('iframe.mail-frame').getByRole('link', { name: 'here' }).waitFor();
    expect(await inbox().getByRole('link', { name: /Password reset/ }).getAttribute('aria-current')).toBe('page');
    await rig.checkA11y();
    await rig.screenshot('sandbox');
    // Remote images allowed for one message stay blocked for the next one selected.
    await pane.getByRole('button', { name: 'Load remote images' }).click();
    await pane.getByText('Remote images are loaded').waitFor();
    await inbox().getByRole('link', { name: /Welcome aboard/ }).click();
    await pane.getByRole('heading', { level: 2, name: 'Welcome aboard' }).waitFor();
    await pane.getByRole('button', { name: 'Load remote images' }).waitFor();
    expect(await page.locator('iframe.mail-frame').getAttribute('src')).not.toContain('images=1');
    // A message that cannot be read (gone, or another account's) shows its problem alone, not
    // the last message under its address (Back and Forward move between messages like this).
    rig.expectErrors(/404/);
    const gone = '00000000-0000-4000-8000-000000000000';
    await page.evaluate(`history.pushState(null, '', '/dashboard/sandbox/${gone}?channelId=${first.channelId}'); dispatchEvent(new PopStateEvent('popstate'))`);
    await pane.getByText(`Message ${gone} does not exist`).waitFor();
    expect(await pane.getByRole('heading', { level: 2, name: 'Welcome aboard' }).count()).toBe(0);
    expect(await page.locator('iframe.mail-frame').count()).toBe(0);
  });

  it('switches to another sandbox channel', async () => {
    const page = rig.page;
    await page.getByLabel('Sandbox channel').selectOption(second.channelId);
    await inbox().getByText('Other channel mail').waitFor();
    expect(await inbox().getByText('Password reset').count()).toBe(0);
    expect(new URL(page.url()).searchParams.get('channelId')).toBe(second.channelId);
  });
});
