import { describe, expect, it } from 'vitest';
import { parseMailboxList } from '../../src/submission/mailbox-list.js';

describe('the strict From/Sender parser (RFC 5322 3.4)', () => {
  it.each([
    ['app@ours.example', [{ address: 'app@ours.example' }]],
    ['App <app@ours.example>', [{ address: 'app@ours.example', name: 'App' }]],
    ['"ceo@bank.example" <app@ours.example>', [{ address: 'app@ours.example', name: 'ceo@bank.example' }]],
    ['John Q. Public <jqp@ours.example>', [{ address: 'jqp@ours.example', name: 'John Q. Public' }]],
    ['app@ours.example (comment (nested) with @ and <>)', [{ address: 'app@ours.example' }]],
    ['a@ours.example,\r\n b@ours.example', [{ address: 'a@ours.example' }, { address: 'b@ours.example' }]],
    ['"a b"@ours.example', [{ address: '"a b"@ours.example' }]],
    ['=?utf-8?q?J=C3=B6rg?= <j@ours.example>', [{ address: 'j@ours.example', name: '=?utf-8?q?J=C3=B6rg?=' }]],
    ['Jörg <jörg@ours.example>', [{ address: 'jörg@ours.example', name: 'Jörg' }]],
  ])('reads %j', (value, expected) => {
    expect(parseMailboxList(value)).toEqual(expected);
  });

  it.each([
    ['app@ours.example ceo@bank.example', /more than one address/],
    ['<app@ours.example> <ceo@bank.example>', /more than one address/],
    ['app@ours.example <ceo@bank.example>', /display name/],
    ['Team: app@ours.example, ceo@bank.example;', /group syntax/],
    ['undisclosed-recipients:;', /group syntax/],
    ['<@relay.example:ceo@bank.example>', /group syntax or a source route/],
    ['app@ours.example,, b@ours.example', /empty address/],
    ['app@ours.example,', /empty address/],
    ['', /empty address/],
    ['just a name', /not an address/],
    ['app@ours.example (unterminated', /unterminated comment/],
    ['"unterminated <app@ours.example>', /unterminated quoted string/],
    ['app@ours.example <', /text after|display name|more than one/],
    ['a\\b@ours.example', /not allowed/],
  ])('refuses %j', (value, problem) => {
    const r = parseMailboxList(value);
    expect('problem' in r && r.problem).toMatch(problem);
  });
});
