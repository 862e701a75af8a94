/**
 * Bounce classification against real replies of big mailbox providers (multi-line replies as
 * the SMTP client receives them, RFC 5321 4.2.1). Each fixture says what the queue must do.
 */
import { describe, expect, it } from 'vitest';
import { BOUNCE_RULES } from '../../src/domain/bounce-rules.js';
import { BOUNCE_CATEGORIES, type DeliveryPhase } from '../../src/domain/delivery-outcome.js';
import { classifyRawReply, classifyReply, parseReply } from '../../src/domain/smtp-reply.js';

interface Fixture {
  provider: string;
  reply: string;
  phase: DeliveryPhase;
  outcome: 'delivered' | 'deferred' | 'bounced';
  bounceType?: 'hard' | 'soft';
  category: string;
}

const FIXTURES: Fixture[] = [
  {
    provider: 'Gmail, unknown user',
    reply: [
      "550-5.1.1 The email account that you tried to reach does not exist. Please try",
      "550-5.1.1 double-checking the recipient's email address for typos or",
      '550-5.1.1 unnecessary spaces. For more information, go to',
      '550 5.1.1  https://support.google.com/mail/?p=NoSuchUser d9443c01a7336-1f6f31a1b2csi123456a12.345 - gsmtp',
    ].join('\n'),
    phase: 'rcpt',
    outcome: 'bounced',
    bounceType: 'hard',
    category: 'unknown_user',
  },
  {
    provider: 'Gmail, disabled account',
    reply: '550-5.2.1 The email account that you tried to reach is disabled.\n550 5.2.1  https://support.google.com/mail/?p=DisabledUser q16si3475662wrs.311 - gsmtp',
    phase: 'rcpt',
    outcome: 'bounced',
    bounceType: 'hard',
    category: 'unknown_user',
  },
  {
    provider: 'Gmail, over quota',
    reply: [
      '452-4.2.2 The email account that you tried to reach is over quota. Please direct',
      '452-4.2.2 the recipient to',
      '452 4.2.2  https://support.google.com/mail/?p=OverQuotaTemp z1si9679476pln.401 - gsmtp',
    ].join('\n'),
    phase: 'rcpt',
    outcome: 'deferred',
    category: 'mailbox_full',
  },
  {
    provider: 'Gmail, unsolicited mail rate limit',
    reply: [
      '421-4.7.28 [192.0.2.10      15] Our system has detected an unusual rate of',
      '421-4.7.28 unsolicited mail originating from your IP address. To protect our',
      '421-4.7.28 users from spam, mail sent from your IP address has been temporarily',
      '421-4.7.28 rate limited. Please visit',
      '421-4.7.28  https://support.google.com/mail/?p=UnsolicitedRateLimitError to',
      '421 4.7.28 review our Bulk Email Senders Guidelines. z1si9679476pln.401 - gsmtp',
    ].join('\n'),
    phase: 'message',
    outcome: 'deferred',
    category: 'rate_limited',
  },
  {
    provider: 'Gmail, unauthenticated sender',
    reply: [
      '550-5.7.26 This mail has been blocked because the sender is unauthenticated.',
      '550-5.7.26 Gmail requires all senders to authenticate with either SPF or DKIM.',
      '550-5.7.26',
      '550-5.7.26  Authentication results:',
      '550-5.7.26  DKIM = did not pass',
      '550-5.7.26  SPF [sender.test] with ip: [192.0.2.10] = did not pass',
      '550-5.7.26',
      '550-5.7.26  For instructions on setting up authentication, go to',
      '550 5.7.26  https://support.google.com/mail/answer/81126#authentication a640c23a62f3a-a6f0ee8b1b3si123456a66.123 - gsmtp',
    ].join('\n'),
    phase: 'message',
    outcome: 'bounced',
    bounceType: 'soft',
    category: 'policy',
  },
  {
    provider: 'Gmail, message likely unsolicited',
    reply: [
      '550-5.7.1 [192.0.2.10      12] Our system has detected that this message is',
      '550-5.7.1 likely unsolicited mail. To reduce the amount of spam sent to Gmail,',
      '550-5.7.1 this message has been blocked. Please visit',
      '550-5.7.1  https://support.google.com/mail/?p=UnsolicitedMessageError',
      '550 5.7.1  for more information. 125si7057894wmk.237 - gsmtp',
    ].join('\n'),
    phase: 'message',
    outcome: 'bounced',
    bounceType: 'soft',
    category: 'spam',
  },
  {
    provider: 'Gmail, receiving at a rate',
    reply: '450-4.2.1 The user you are trying to contact is receiving mail at a rate that\n450-4.2.1 prevents additional messages from being delivered. Please resend your\n450 4.2.1 message at a later point. - gsmtp',
    phase: 'rcpt',
    outcome: 'deferred',
    category: 'rate_limited',
  },
  {
    provider: 'Gmail, size limit',
    reply: "552-5.2.3 Your message exceeded Google's message size limits. Please visit\n552 5.2.3  https://support.google.com/mail/?p=MaxSizeError - gsmtp",
    phase: 'message',
    outcome: 'bounced',
    bounceType: 'soft',
    category: 'message_too_large',
  },
  {
    provider: 'Outlook, mailbox unavailable',
    reply: '550 5.5.0 Requested action not taken: mailbox unavailable (S2017062302). [AM4PEPF00027A5F.eurprd04.prod.outlook.com 2024-05-13T10:00:00.000Z 08DC7123456789AB]',
    phase: 'rcpt',
    outcome: 'bounced',
    bounceType: 'hard',
    category: 'unknown_user',
  },
  {
    provider: 'Microsoft 365, directory-based edge blocking',
    reply: '550 5.4.1 Recipient address rejected: Access denied. For more information see https://aka.ms/EXOSmtpErrors [DB5PEPF00014B8A.eurprd02.prod.outlook.com]',
    phase: 'rcpt',
    outcome: 'bounced',
    bounceType: 'hard',
    category: 'unknown_user',
  },
  {
    provider: 'Microsoft 365, recipient not found',
    reply: "550 5.1.10 RESOLVER.ADR.RecipientNotFound; Recipient nobody@contoso.test not found by SMTP address lookup",
    phase: 'rcpt',
    outcome: 'bounced',
    bounceType: 'hard',
    category: 'unknown_user',
  },
  {
    provider: 'Outlook, insufficient system resources',
    reply: '452 4.3.1 Insufficient system resources (UsedDiskSpace[C:\\Program Files\\Microsoft\\Exchange Server\\V15\\TransportRoles\\data\\Queue])',
    phase: 'mail',
    outcome: 'deferred',
    category: 'other',
  },
  {
    provider: 'Outlook, Spamhaus listing',
    reply: '550 5.7.1 Service unavailable, Client host [192.0.2.10] blocked using Spamhaus. To request removal from this list see https://www.spamhaus.org/query/ip/192.0.2.10 (AS3130). [VE1EUR01FT062.eop-EUR01.prod.protection.outlook.com]',
    phase: 'rcpt',
    outcome: 'deferred',
    category: 'spam',
  },
  {
    provider: 'Outlook, banned sending IP',
    reply: '550 5.7.606 Access denied, banned sending IP [192.0.2.10]. To request removal from this list please visit https://sender.office.com/ and follow the directions. For more information please go to http://go.microsoft.com/fwlink/?LinkID=526655 (AS16012609)',
    phase: 'rcpt',
    outcome: 'deferred',
    category: 'spam',
  },
  {
    provider: 'Outlook, rate limited for IP reputation',
    reply: '451 4.7.650 The mail server [192.0.2.10] has been temporarily rate limited due to IP reputation. For e-mail delivery information, see https://postmaster.live.com (S3113) [VI1EUR06FT038.eop-eur06.prod.protection.outlook.com]',
    phase: 'rcpt',
    outcome: 'deferred',
    category: 'rate_limited',
  },
  {
    provider: 'Outlook, full mailbox',
    reply: '554 5.2.2 mailbox full; STOREDRV.Deliver.Exception:QuotaExceededException.MapiExceptionShutoffQuotaExceeded',
    phase: 'message',
    outcome: 'deferred',
    category: 'mailbox_full',
  },
  {
    provider: 'Yahoo, TSS04 volume deferral',
    reply: '421 4.7.0 [TSS04] Messages from 192.0.2.10 temporarily deferred due to unexpected volume or user complaints - 4.16.55.1; see https://postmaster.yahooinc.com/error-codes',
    phase: 'mail',
    outcome: 'deferred',
    category: 'rate_limited',
  },
  {
    provider: 'Yahoo, policy rejection',
    reply: '554 5.7.9 Message not accepted for policy reasons.  See https://postmaster.yahooinc.com/error-codes',
    phase: 'message',
    outcome: 'bounced',
    bounceType: 'soft',
    category: 'policy',
  },
  {
    provider: 'Yahoo, mailbox full',
    reply: '552 1 Requested mail action aborted, mailbox full',
    phase: 'rcpt',
    outcome: 'deferred',
    category: 'mailbox_full',
  },
  {
    provider: 'Yahoo, no such account',
    reply: "554 delivery error: dd This user doesn't have a yahoo.com account (nobody@yahoo.com) [0] - mta1234.mail.bf1.yahoo.com",
    phase: 'message',
    outcome: 'bounced',
    bounceType: 'hard',
    category: 'unknown_user',
  },
  {
    provider: 'Yahoo, Spamhaus listing at connect',
    reply: "553 5.7.1 [BL21] Connections will not be accepted from 192.0.2.10, because the ip is in Spamhaus's list; see https://postmaster.yahooinc.com/error-codes",
    phase: 'greeting',
    outcome: 'deferred',
    category: 'spam',
  },
  {
    provider: 'milter-greylist',
    reply: '451 4.7.1 Greylisting in action, please come back later',
    phase: 'rcpt',
    outcome: 'deferred',
    category: 'greylisted',
  },
  {
    provider: 'postgrey',
    reply: '450 4.2.0 <someone@example.test>: Recipient address rejected: Greylisted, see http://postgrey.schweikert.ch/help/example.test.html',
    phase: 'rcpt',
    outcome: 'deferred',
    category: 'greylisted',
  },
  {
    provider: 'a greylisting server that answers 5xx',
    reply: '550 5.7.1 Message greylisted, please retry',
    phase: 'rcpt',
    outcome: 'deferred',
    category: 'greylisted',
  },
  {
    provider: 'Exim, "try later" in a 5xx',
    reply: '554 Temporary local problem - please try again later',
    phase: 'message',
    outcome: 'deferred',
    category: 'other',
  },
  {
    provider: 'a server that sends 421 at the greeting',
    reply: '421 mx.example.test Service not available, closing transmission channel',
    phase: 'greeting',
    outcome: 'deferred',
    category: 'connection',
  },
  {
    provider: 'Postfix, user unknown',
    reply: '550 5.1.1 <nobody@example.test>: Recipient address rejected: User unknown in virtual mailbox table',
    phase: 'rcpt',
    outcome: 'bounced',
    bounceType: 'hard',
    category: 'unknown_user',
  },
  {
    provider: 'a sender refusal at MAIL FROM, never the recipient\'s fault',
    reply: '553 5.1.8 <bounces@sender.test>: Sender address rejected: Domain not found',
    phase: 'mail',
    outcome: 'bounced',
    bounceType: 'soft',
    category: 'policy',
  },
  {
    provider: 'a receiver refusing a line over 998 octets at the end of DATA',
    reply: '500 Line too long',
    phase: 'message',
    outcome: 'bounced',
    bounceType: 'soft',
    category: 'other',
  },
  {
    provider: 'a syntax error about our command at RCPT, without an enhanced code',
    reply: '500 Syntax error, command unrecognized',
    phase: 'rcpt',
    outcome: 'bounced',
    bounceType: 'soft',
    category: 'other',
  },
  {
    provider: 'a line-length refusal in a 550',
    reply: '550 Message has lines longer than 998 characters (RFC 5322 2.1.1)',
    phase: 'message',
    outcome: 'bounced',
    bounceType: 'soft',
    category: 'other',
  },
  {
    provider: 'smtp-server (Nodemailer), size limit without an enhanced code',
    reply: '552 Error: message exceeds fixed maximum message size 1048576',
    phase: 'message',
    outcome: 'bounced',
    bounceType: 'soft',
    category: 'message_too_large',
  },
  {
    provider: 'a bare 552 after DATA',
    reply: '552 Requested mail action aborted',
    phase: 'message',
    outcome: 'bounced',
    bounceType: 'soft',
    category: 'message_too_large',
  },
  {
    provider: 'a plain 250 after DATA',
    reply: '250 2.0.0 OK  1715600000 d9443c01a7336-1f6f31a1b2csi123456a12.345 - gsmtp',
    phase: 'message',
    outcome: 'delivered',
    category: 'delivered',
  },
];

describe('classification of real provider replies', () => {
  it.each(FIXTURES.map((f) => [f.provider, f] as const))('%s', (_name, f) => {
    const c = classifyRawReply(f.reply, f.phase);
    expect({ outcome: c.outcome, bounceType: c.bounceType, category: c.category }).toEqual({ outcome: f.outcome, bounceType: f.bounceType, category: f.category });
  });
});

describe('parseReply', () => {
  it('reads the code and the enhanced code and joins the lines of a multi-line reply', () => {
    const r = parseReply('550-5.1.1 The email account\n550-5.1.1 does not exist.\n550 5.1.1  https://x.test - gsmtp');
    expect(r).toEqual({ code: 550, enhancedCode: '5.1.1', text: 'The email account does not exist. https://x.test - gsmtp' });
  });

  it('does not take a bare number for an enhanced status code', () => {
    expect(parseReply('552 1 Requested mail action aborted, mailbox full')).toEqual({ code: 552, enhancedCode: undefined, text: '1 Requested mail action aborted, mailbox full' });
  });
});

describe('classifyReply', () => {
  it('honours the enhanced status code over the basic code (RFC 3463)', () => {
    expect(classifyReply({ code: 550, enhancedCode: '4.2.2', text: 'Mailbox temporarily over its limit', phase: 'rcpt' }).outcome).toBe('deferred');
  });

  it('never bounces a 4xx reply, whatever its text says', () => {
    expect(classifyReply({ code: 450, enhancedCode: '4.1.1', text: 'User unknown', phase: 'rcpt' })).toMatchObject({ outcome: 'deferred', category: 'unknown_user' });
  });

  it('bounces an unknown 5xx hard, as RFC 5321 says permanent', () => {
    expect(classifyReply({ code: 550, text: 'Go away', phase: 'rcpt' })).toMatchObject({ outcome: 'bounced', bounceType: 'hard', category: 'other' });
  });

  it('defers connection failures without a reply and names them by phase', () => {
    expect(classifyReply({ text: 'ECONNREFUSED: connect ECONNREFUSED 192.0.2.1:25', phase: 'connect' })).toMatchObject({ outcome: 'deferred', category: 'connection' });
    expect(classifyReply({ text: 'ETLS: Error initiating TLS', phase: 'tls' })).toMatchObject({ outcome: 'deferred', category: 'tls' });
  });

  it('defers a temporary DNS failure and bounces NXDOMAIN and null MX hard', () => {
    expect(classifyReply({ enhancedCode: '4.4.3', text: 'SERVFAIL', phase: 'dns' })).toMatchObject({ outcome: 'deferred', category: 'dns' });
    expect(classifyReply({ enhancedCode: '5.1.2', text: 'NXDOMAIN', phase: 'dns' })).toMatchObject({ outcome: 'bounced', bounceType: 'hard', category: 'dns' });
    // mx.ts's own description says "does not exist", which must not make it an unknown user.
    const nx = 'Host or domain name not found: gone.test does not exist (NXDOMAIN)';
    expect(classifyReply({ enhancedCode: '5.1.2', text: nx, phase: 'dns' })).toMatchObject({ outcome: 'bounced', bounceType: 'hard', category: 'dns', rule: 'dns-no-domain' });
    expect(classifyReply({ code: 556, enhancedCode: '5.1.10', text: 'null MX', phase: 'dns' })).toMatchObject({ outcome: 'bounced', bounceType: 'hard', category: 'dns' });
  });

  it('treats 503 (bad sequence of commands) as temporary', () => {
    expect(classifyReply({ code: 503, enhancedCode: '5.5.1', text: 'Error: need RCPT command', phase: 'data' }).outcome).toBe('deferred');
  });
});

describe('the rules table', () => {
  it('has unique ids and only known categories', () => {
    expect(new Set(BOUNCE_RULES.map((r) => r.id)).size).toBe(BOUNCE_RULES.length);
    for (const r of BOUNCE_RULES) expect(BOUNCE_CATEGORIES).toContain(r.category);
  });
});
