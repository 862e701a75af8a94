/**
 * Automatic shaping rules (domain/shaping-rules.ts, shaping-match.ts): every built-in rule
 * against the provider's real reply text, replies that must not match, the operator's rules
 * (first) and disabled built-in rules, and the config checks that stop a bad rule at start.
 */
import { describe, expect, it } from 'vitest';
import { BUILTIN_SHAPING_RULES } from '../../src/domain/shaping-rules.js';
import { compileShapingRules, matchShapingRule, oneLine, safePatternProblem, shapingProblems, type ShapingReply } from '../../src/domain/shaping-match.js';

const YAHOO = ['mta5.am0.yahoodns.net', 'mta6.am0.yahoodns.net'];
const MICROSOFT = ['example-com.mail.protection.outlook.com'];
const GOOGLE = ['aspmx.l.google.com', 'alt1.aspmx.l.google.com'];

const rules = compileShapingRules();

function ruleOf(reply: ShapingReply, provider: string | undefined, hosts: string[]): string | undefined {
  return matchShapingRule(rules, reply, provider, hosts)?.id;
}

describe('built-in shaping rules', () => {
  it('turns each provider’s real throttling reply into its rule', () => {
    const cases: [string, ShapingReply, string, string[]][] = [
      ['yahoo-tss04', { smtpCode: 421, enhancedCode: '4.7.0', text: '421 4.7.0 [TSS04] Messages from 192.0.2.10 temporarily deferred due to unexpected volume or user complaints - 4.16.55.1; see https://postmaster.yahooinc.com/error-codes' }, 'yahoo', YAHOO],
      ['yahoo-tss04', { smtpCode: 421, enhancedCode: '4.7.0', text: '421 4.7.0 [TS04] Messages from 192.0.2.10 temporarily deferred due to user complaints - 4.16.55.1' }, 'yahoo', YAHOO],
      ['yahoo-tss05', { smtpCode: 421, enhancedCode: '4.7.0', text: '421 4.7.0 [TSS05] Messages from 192.0.2.10 temporarily deferred due to unexpected volume or user complaints - 4.16.55.1' }, 'yahoo', YAHOO],
      ['yahoo-ts03', { smtpCode: 421, enhancedCode: '4.7.1', text: '421 4.7.1 [TS03] All messages from 192.0.2.10 permanently deferred' }, 'yahoo', YAHOO],
      ['microsoft-server-busy', { smtpCode: 451, enhancedCode: '4.7.500', text: '451 4.7.500 Server busy. Please try again later from [192.0.2.10]. (S77719) [AM0PR01MB1234.eurprd01.prod.exchangelabs.com]' }, 'microsoft', MICROSOFT],
      ['microsoft-ip-reputation', { smtpCode: 451, enhancedCode: '4.7.650', text: '451 4.7.650 The mail server [192.0.2.10] has been temporarily rate limited due to IP reputation. For e-mail delivery information, see https://postmaster.live.com (S775)' }, 'microsoft', MICROSOFT],
      ['microsoft-ip-reputation', { smtpCode: 451, enhancedCode: '4.7.651', text: '451 4.7.651 The mail server [192.0.2.10] has been temporarily rate limited due to IP reputation. For e-mail delivery information, see https://postmaster.live.com (S3114)' }, 'microsoft', MICROSOFT],
      [
        'google-unsolicited-rate',
        {
          smtpCode: 421,
          enhancedCode: '4.7.28',
          // As the client receives it: one line per reply line, each with its codes.
          text: [
            '421-4.7.28 [192.0.2.10      15] Our system has detected an unusual rate of',
            '421-4.7.28 unsolicited mail originating from your IP address. To protect our',
            '421-4.7.28 users from spam, mail sent from your IP address has been temporarily',
            '421-4.7.28 rate limited. Please visit',
            '421-4.7.28  https://support.google.com/mail/?p=UnsolicitedRateLimitError to',
            '421 4.7.28 review our Bulk Email Senders Guidelines. a1-20020a05 - gsmtp',
          ].join('\n'),
        },
        'google',
        GOOGLE,
      ],
    ];
    for (const [id, reply, provider, hosts] of cases) expect(ruleOf(reply, provider, hosts), reply.text).toBe(id);
    // Every built-in rule has a case above.
    expect(new Set(cases.map(([id]) => id))).toEqual(new Set(BUILTIN_SHAPING_RULES.map((r) => r.id)));
  });

  it('leaves other replies, other providers and successes alone', () => {
    const tss04 = { smtpCode: 421, enhancedCode: '4.7.0', text: '421 4.7.0 [TSS04] Messages from 192.0.2.10 temporarily deferred' };
    expect(ruleOf({ smtpCode: 450, enhancedCode: '4.2.1', text: '450 4.2.1 The user you are trying to contact is receiving mail at a rate that prevents additional messages from being delivered.' }, 'google', GOOGLE)).toBeUndefined();
    expect(ruleOf({ smtpCode: 421, enhancedCode: '4.7.0', text: '421 4.7.0 Try again later, closing connection. (EHLO) - gsmtp' }, 'google', GOOGLE)).toBeUndefined();
    // Yahoo's code from another provider's MX is no Yahoo deferral.
    expect(ruleOf(tss04, 'google', GOOGLE)).toBeUndefined();
    expect(ruleOf(tss04, undefined, ['mx.example.net'])).toBeUndefined();
    // A 2yz reply never shapes, whatever it says.
    expect(ruleOf({ smtpCode: 250, enhancedCode: '2.0.0', text: '250 2.0.0 OK [TSS04] queued' }, 'yahoo', YAHOO)).toBeUndefined();
    // Server busy with another enhanced code is not Microsoft's throttling reply.
    expect(ruleOf({ smtpCode: 451, enhancedCode: '4.3.2', text: '451 4.3.2 Server busy. Please try again later from [192.0.2.10].' }, 'microsoft', MICROSOFT)).toBeUndefined();
  });

  it('uses only patterns that the operator’s check would accept', () => {
    for (const r of BUILTIN_SHAPING_RULES) if (r.match !== undefined) expect(safePatternProblem(r.match), r.id).toBeUndefined();
  });

  it('puts a multi-line reply on one line without its continuation codes, and cuts a long one', () => {
    expect(oneLine('421-4.7.28 a\r\n421-4.7.28 b\n421 4.7.28 c')).toBe('421-4.7.28 a b c');
    expect(oneLine('550-Line one\n550 line two')).toBe('550-Line one line two');
    expect(oneLine('x'.repeat(100_000))).toHaveLength(1000);
  });
});

describe('operator shaping rules (delivery.shaping)', () => {
  it('checks the operator’s rules before the built-in ones, and drops the disabled ones', () => {
    const own = compileShapingRules({
      rules: [{ id: 'yahoo-longer', provider: 'yahoo', match: '\\[TSS04\\]', action: 'suspend', duration: '6h' }],
      disable: ['microsoft-server-busy'],
    });
    const tss04 = { smtpCode: 421, enhancedCode: '4.7.0', text: '421 4.7.0 [TSS04] Messages from 192.0.2.10 temporarily deferred' };
    const hit = matchShapingRule(own, tss04, 'yahoo', YAHOO)!;
    expect([hit.id, hit.origin, hit.durationMs]).toEqual(['yahoo-longer', 'operator', 6 * 3_600_000]);
    const busy = { smtpCode: 451, enhancedCode: '4.7.500', text: '451 4.7.500 Server busy. Please try again later from [192.0.2.10].' };
    expect(matchShapingRule(own, busy, 'microsoft', MICROSOFT)).toBeUndefined();
    expect(matchShapingRule(compileShapingRules(), busy, 'microsoft', MICROSOFT)?.id).toBe('microsoft-server-busy');
  });

  it('matches a suffix rule at the sites of its MX hosts only, and sets its ceiling', () => {
    const own = compileShapingRules({
      rules: [{ id: 'orange-rl', suffixes: ['orange.fr'], enhancedCode: '4.2.1', action: 'ceiling', concurrency: 1, perSecond: 0.5, duration: '30m' }],
      disable: [],
    });
    const reply = { smtpCode: 421, enhancedCode: '4.2.1', text: '421 4.2.1 Service refuse. Veuillez essayer plus tard. OFR004_104 [104]' };
    expect(matchShapingRule(own, reply, undefined, ['smtp-in.orange.fr'])?.action).toEqual({ kind: 'ceiling', concurrency: 1, perSecond: 0.5 });
    expect(matchShapingRule(own, reply, undefined, ['smtp-in.notorange.fr'])).toBeUndefined();
  });

  it('names each bad rule at load: pattern, provider, id, action, duration', () => {
    const problems = shapingProblems({
      rules: [
        { id: 'slow', match: '(a+)+b', action: 'suspend', duration: '1h' },
        { id: 'alt', match: '(?:busy|full)*', action: 'suspend', duration: '1h' },
        { id: 'broken', match: '([unclosed', action: 'suspend', duration: '1h' },
        { id: 'nowhere', provider: 'altavista', match: 'x', action: 'suspend', duration: '1h' },
        { id: 'yahoo-tss04', match: 'x', action: 'suspend', duration: '1h' },
        { id: 'empty', action: 'ceiling', duration: '1h' },
        { id: 'short', match: 'x', action: 'suspend', duration: '5s' },
        { id: 'ok', match: '(?:Server|Host) busy \\d+\\.\\d+', enhancedCode: '4.7.500', action: 'ceiling', concurrency: 1, duration: '30m' },
      ],
      disable: ['no-such-rule'],
    });
    const text = problems.join('\n');
    expect(text).toMatch(/\[0\] \("slow"\): "match": a repeated group may not hold a quantifier/);
    expect(text).toMatch(/\[1\] \("alt"\): "match": a repeated group/);
    expect(text).toMatch(/\[2\] \("broken"\): "match": not a regular expression/);
    expect(text).toMatch(/\[3\] \("nowhere"\): unknown provider "altavista"/);
    expect(text).toMatch(/\[4\] \("yahoo-tss04"\): the id is taken/);
    expect(text).toMatch(/\[5\] \("empty"\): needs "match".*\n.*\[5\] \("empty"\): a "ceiling" needs "concurrency" or "perSecond"/);
    expect(text).toMatch(/\[6\] \("short"\): "duration" must be between 1m and 7d/);
    expect(text).toMatch(/"delivery.shaping.disable": "no-such-rule" is no built-in rule/);
    expect(text).not.toMatch(/"ok"/);
  });

  it('refuses backreferences and accepts classes and escaped parentheses', () => {
    expect(safePatternProblem('(a)\\1')).toMatch(/backreferences/);
    expect(safePatternProblem('[(+)]+ \\(S\\d+\\)')).toBeUndefined();
    expect(safePatternProblem('(?<code>\\d+)x')).toBeUndefined();
  });
});
