import { describe, expect, it } from '@jest/globals';
import { malformedHost, refusedHost } from './allowed-hosts.js';

const LOCAL = ['localhost', '127.0.0.1', '[::1]'];

describe(refusedHost.name, () => {
  it.each<[string, { host?: string; origin?: string }, string[]]>([
    ['localhost with a port', { host: 'localhost:8080' }, LOCAL],
    ['127.0.0.1 without a port', { host: '127.0.0.1' }, LOCAL],
    ['IPv6 loopback with a port', { host: '[::1]:3000' }, LOCAL],
    ['upper case', { host: 'LOCALHOST:1' }, LOCAL],
    ['an allowed Origin', { host: 'localhost:1', origin: 'http://127.0.0.1:5173' }, LOCAL],
    ['a configured service name', { host: 'agent-manager.agents.svc:8080' }, ['agent-manager.agents.svc']],
    ['anything with *', { host: 'evil.example.com', origin: 'http://evil.example.com' }, ['*']],
  ])('accepts %s', (_, headers, allowed) => {
    expect(refusedHost(headers, allowed)).toBeNull();
  });

  it.each<[string, { host?: string; origin?: string }, string]>([
    ['a foreign Host', { host: 'evil.example.com' }, 'Host evil.example.com'],
    ['a foreign Host and Origin', { host: 'evil.example.com:80', origin: 'http://evil.example.com' }, 'Host evil.example.com:80'],
    ['a foreign Origin with a local Host', { host: 'localhost:8080', origin: 'http://evil.example.com' }, 'Origin http://evil.example.com'],
    ['a null Origin', { host: 'localhost', origin: 'null' }, 'Origin null'],
    ['no Host', {}, 'Host (none)'],
    ['a name that only starts like an allowed one', { host: 'localhost.evil.com' }, 'Host localhost.evil.com'],
  ])('refuses %s', (_, headers, refused) => {
    expect(refusedHost(headers, LOCAL)).toBe(refused);
  });
});

describe(malformedHost.name, () => {
  it.each(['localhost', 'localhost:8080', '[::1]:3000', 'agent-manager.agents.svc:8080'])('takes %s', (host) => {
    expect(malformedHost(host)).toBeNull();
  });

  it.each(['localhost:99999', 'local host', 'localhost:80:80'])('names %s as no host[:port]', (host) => {
    expect(malformedHost(host)).toBe(`the Host header "${host}" is not a host name with an optional port from 1 to 65535`);
  });
});
