/**
 * The dashboard's pages: the route table (pattern → page) and the navigation. Adding a page is
 * one entry in ROUTES (and in NAV when it has a menu item); dashboard/README.md says how.
 */
import type { Route } from './router';
import { ChannelPage } from './pages/channels-detail';
import { ChannelsPage } from './pages/channels';
import { DomainPage } from './pages/domains-detail';
import { DomainsPage } from './pages/domains';
import { WebhookPage } from './pages/webhooks-detail';
import { WebhooksPage } from './pages/webhooks';
import { ActivityPage } from './pages/activity';
import { MessagePage } from './pages/message';
import { OverviewPage } from './pages/overview';
import { QueueMessagesPage } from './pages/queue-destination';
import { QueuePage } from './pages/queue';
import { BroadcastsPage } from './pages/broadcasts';
import { BroadcastPage } from './pages/broadcasts-detail';
import { SuppressionsPage } from './pages/suppressions';
import { SandboxPage } from './pages/sandbox';
import { ApiKeysPage } from './pages/api-keys';
import { InboundPage } from './pages/inbound';
import { InboundRoutePage } from './pages/inbound-route';
import { InboundMessagesPage } from './pages/inbound-messages';
import { InboundMessagePage } from './pages/inbound-message';
import { TemplatesPage } from './pages/templates';
import { TemplateNewPage } from './pages/templates-new';
import { TemplatePage } from './pages/templates-detail';
import { SourcesPage } from './pages/sources';

export interface NavItem {
  to: string;
  label: string;
}

export const NAV: NavItem[] = [
  { to: '/', label: 'Overview' },
  { to: '/activity', label: 'Activity' },
  { to: '/channels', label: 'Channels' },
  { to: '/domains', label: 'Domains' },
  { to: '/webhooks', label: 'Webhooks' },
  { to: '/inbound', label: 'Inbound' },
  { to: '/templates', label: 'Templates' },
  { to: '/suppressions', label: 'Suppressions' },
  { to: '/broadcasts', label: 'Broadcasts' },
  { to: '/sandbox', label: 'Sandbox inbox' },
  { to: '/queue', label: 'Queue' },
  { to: '/sources', label: 'Sources' },
  { to: '/api-keys', label: 'API keys' },
];

/** First match wins; a page reads its params (":id") from the argument. */
export const ROUTES: Route[] = [
  { pattern: '/', render: () => <OverviewPage /> },
  { pattern: '/channels', render: () => <ChannelsPage /> },
  { pattern: '/channels/:id', render: (p) => <ChannelPage id={p.id} /> },
  { pattern: '/domains', render: () => <DomainsPage /> },
  { pattern: '/domains/:id', render: (p) => <DomainPage id={p.id} /> },
  { pattern: '/webhooks', render: () => <WebhooksPage /> },
  { pattern: '/webhooks/:id', render: (p) => <WebhookPage id={p.id} /> },
  { pattern: '/activity', render: () => <ActivityPage /> },
  { pattern: '/messages/:id', render: (p) => <MessagePage id={p.id} /> },
  { pattern: '/sandbox', render: () => <SandboxPage /> },
  { pattern: '/sandbox/:id', render: (p) => <SandboxPage id={p.id} /> },
  { pattern: '/suppressions', render: () => <SuppressionsPage /> },
  { pattern: '/broadcasts', render: () => <BroadcastsPage /> },
  { pattern: '/broadcasts/:id', render: (p) => <BroadcastPage id={p.id} /> },
  { pattern: '/queue', render: () => <QueuePage /> },
  { pattern: '/queue/messages', render: () => <QueueMessagesPage /> },
  { pattern: '/sources', render: () => <SourcesPage /> },
  { pattern: '/api-keys', render: () => <ApiKeysPage /> },
  { pattern: '/inbound', render: () => <InboundPage /> },
  { pattern: '/inbound/routes/:id', render: (p) => <InboundRoutePage id={p.id} /> },
  { pattern: '/inbound/messages', render: () => <InboundMessagesPage /> },
  { pattern: '/inbound/messages/:id', render: (p) => <InboundMessagePage id={p.id} /> },
  { pattern: '/templates', render: () => <TemplatesPage /> },
  // Before /templates/:id. The dashboard names templates by id (a UUID), so one aliased "new" is no conflict.
  { pattern: '/templates/new', render: () => <TemplateNewPage /> },
  // Keyed: another template's page starts without the last one's notice.
  { pattern: '/templates/:id', render: (p) => <TemplatePage key={p.id} id={p.id} /> },
];

/** The nav item a path belongs to ("/channels/123" → "/channels"). */
export function activeNav(path: string): string {
  const top = path.split('/').filter(Boolean)[0] ?? '';
  // A message page (/messages/:id) is reached from Activity.
  const first = top === 'messages' ? '/activity' : `/${top}`;
  return NAV.some((n) => n.to === first) ? first : '/';
}
