/** The configuration file's audit settings: `audit` stanzas in HCL and JSON, the switches and the allowlist. */
import { expect } from 'chai';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { loadConfig, parseConfig } from '../../../core/config/config.js';
import { sanitizedConfig } from '../../../core/config/sanitized.js';
import { CONFIG_BASE, MINIMAL_HCL, configRefusal, useScratchConfig } from '../../helpers/config-files.js';

describe('audit settings of the configuration file', () => {
  const scratch = useScratchConfig('kw-audit-config-');
  const hcl = scratch.hcl;

  it('reads repeated audit "<type>" "<path>" stanzas in order, with description, local and string options', () => {
    const file = hcl(
      [
        'audit "file" "to-file" {',
        '  description = "the main log"',
        '  options {',
        '    file_path = "logs/audit.log"',
        '    mode      = "0640"',
        '  }',
        '}',
        'audit "socket" "team/net" {',
        '  local   = true',
        '  options = {',
        '    address = "127.0.0.1:9090"',
        '  }',
        '}',
        'audit "file" "out" {',
        '  options { file_path = "stdout" }',
        '}',
      ].join('\n'),
    );
    expect(loadConfig(file).audit!.devices).to.deep.equal([
      {
        path: 'to-file/',
        type: 'file',
        description: 'the main log',
        local: false,
        // Relative to the file's directory, like every other path of the file.
        options: { file_path: path.join(scratch.dir(), 'logs/audit.log'), mode: '0640' },
        declaredAt: `${file}:5`,
      },
      { path: 'team/net/', type: 'socket', description: '', local: true, options: { address: '127.0.0.1:9090' }, declaredAt: `${file}:12` },
      { path: 'out/', type: 'file', description: '', local: false, options: { file_path: 'stdout' }, declaredAt: `${file}:18` },
    ]);
  });

  it('reads the JSON form OpenBao documents, a list of {type: {path: body}}', () => {
    const config = parseConfig(
      {
        storage: { inmem: {} },
        listener: { tcp: { tls_disable: true } },
        audit: [{ file: { 'to-stdout': { description: 'Write audit information to standard output.', options: { file_path: 'stdout' } } } }, { syslog: { sys: {} } }],
      },
      CONFIG_BASE,
    );
    expect(config.audit!.devices.map(({ path: p, type, description, options }) => ({ p, type, description, options }))).to.deep.equal([
      { p: 'to-stdout/', type: 'file', description: 'Write audit information to standard output.', options: { file_path: 'stdout' } },
      { p: 'sys/', type: 'syslog', description: '', options: {} },
    ]);
  });

  it('keeps every switch off and the allowlist empty by default', () => {
    expect(loadConfig(hcl('')).audit).to.deep.equal({
      devices: [],
      unsafeAllowApiAuditCreation: false,
      allowAuditLogPrefixing: false,
      apiAuditSocketAllowlist: [],
    });
  });

  it('reads the switches, and the allowlist normalized: IPv6 canonical in brackets, host names lower-cased, unix paths as absolute paths', () => {
    const audit = loadConfig(
      hcl(
        [
          'unsafe_allow_api_audit_creation = true',
          'allow_audit_log_prefixing = "true"',
          'api_audit_socket_allowlist = ["127.0.0.1:9090", "[0:0:0:0:0:0:0:1]:514", "Collector.Internal:6514", "/run/collector/../audit.sock"]',
        ].join('\n'),
      ),
    ).audit!;
    expect(audit.unsafeAllowApiAuditCreation).to.equal(true);
    expect(audit.allowAuditLogPrefixing).to.equal(true);
    expect(audit.apiAuditSocketAllowlist).to.deep.equal(['127.0.0.1:9090', '[::1]:514', 'collector.internal:6514', '/run/audit.sock']);
  });

  it('refuses an allowlist entry that is neither host:port nor an absolute socket path, naming the file, line and key', () => {
    for (const entry of ['localhost', 'relative.sock', '127.0.0.1:0', '127.0.0.1:70000']) {
      const message = configRefusal(() => loadConfig(hcl(`api_audit_socket_allowlist = ["${entry}"]\n`)));
      expect(message, entry).to.match(new RegExp(`server\\.hcl:5: api_audit_socket_allowlist: "${entry.replace(/\./g, '\\.')}" is neither host:port`));
    }
    expect(configRefusal(() => loadConfig(hcl('api_audit_socket_allowlist = "127.0.0.1:1"\n')))).to.contain('expected a list of strings');
  });

  it('refuses a stanza with an unknown key, an option that is not a string, or an option set twice, naming the line and key', () => {
    expect(configRefusal(() => loadConfig(hcl('audit "file" "a" {\n  path = "x"\n}\n')))).to.match(/server\.hcl:6: audit\.file\.a\.path: unknown key; expected one of description, local, options/);
    expect(configRefusal(() => loadConfig(hcl('audit "file" "a" {\n  options {\n    mode = 600\n  }\n}\n')))).to.match(/server\.hcl:7: audit\.file\.a\.options\.mode: expected a string, got a number/);
    expect(configRefusal(() => loadConfig(hcl('audit "file" "a" {\n  options {\n    file_path = "x"\n    file_path = "y"\n  }\n}\n')))).to.match(
      /server\.hcl:8: audit\.file\.a\.options\.file_path: set twice in this file \(first on line 7\)/,
    );
    expect(configRefusal(() => loadConfig(hcl('audit "file" {\n}\n')))).to.match(/server\.hcl:5: audit\.file: expected a path after the type/);
  });

  it('refuses two stanzas with one path, in one file or across the files of a directory, and paths inside each other', () => {
    const twice = configRefusal(() => loadConfig(hcl('audit "file" "a" {\n  options { file_path = "stdout" }\n}\naudit "socket" "a/" {\n  options { address = "127.0.0.1:1" }\n}\n')));
    expect(twice).to.match(/server\.hcl:8: audit\.socket\.a\/: audit device path "a\/" is declared twice \(first at .*server\.hcl:5\)/);

    const confd = path.join(scratch.dir(), 'conf.d');
    mkdirSync(confd);
    writeFileSync(path.join(confd, '10-base.hcl'), MINIMAL_HCL + 'audit "file" "logs" {\n  options { file_path = "stdout" }\n}\n');
    writeFileSync(path.join(confd, '20-more.hcl'), 'audit "file" "logs/more" {\n  options { file_path = "discard" }\n}\n');
    expect(configRefusal(() => loadConfig(confd))).to.match(/20-more\.hcl:1: audit\.file\.logs\/more: audit device path "logs\/more\/" overlaps "logs\/" declared at .*10-base\.hcl:5/);
  });

  it('checks each stanza\'s options as its device type does: prefix only with allow_audit_log_prefixing, no executable or writable-by-others mode', () => {
    const prefixed = 'audit "file" "a" {\n  options {\n    file_path = "stdout"\n    prefix = "x"\n  }\n}\n';
    expect(configRefusal(() => loadConfig(hcl(prefixed)))).to.match(/server\.hcl:5: audit\.file\.a: audit device option "prefix": audit log prefixing is not allowed/);
    expect(loadConfig(hcl(`allow_audit_log_prefixing = true\n${prefixed}`)).audit!.devices[0]!.options.prefix).to.equal('x');

    for (const mode of ['4777', '0777', '0666', '0755', '2600', '0620']) {
      const message = configRefusal(() => loadConfig(hcl(`audit "file" "a" {\n  options {\n    file_path = "audit.log"\n    mode = "${mode}"\n  }\n}\n`)));
      expect(message, mode).to.match(new RegExp(`server\\.hcl:5: audit\\.file\\.a: audit device option "mode": "${mode}" is refused`));
    }
    expect(configRefusal(() => loadConfig(hcl('audit "tape" "a" {\n}\n')))).to.match(/audit\.tape\.a: unknown audit device type "tape"/);
    expect(configRefusal(() => loadConfig(hcl('audit "file" "a" {\n  options { filepath = "x" }\n}\n')))).to.match(/audit\.file\.a: unknown audit device option\(s\) "filepath"/);
    expect(configRefusal(() => loadConfig(hcl('audit "file" "../up" {\n}\n')))).to.match(/audit\.file\.\.\.\/up: invalid audit device path/);
  });

  it('shows the switches, the allowlist and each declared device\'s path, type and description (not where it writes) in the sanitized configuration', () => {
    const config = loadConfig(
      hcl(
        'unsafe_allow_api_audit_creation = true\napi_audit_socket_allowlist = ["127.0.0.1:9090"]\n' +
          'audit "file" "to-file" {\n  description = "main"\n  options { file_path = "/var/log/keywarden/audit.log" }\n}\n',
      ),
    );
    const shown = sanitizedConfig(config);
    expect(shown).to.deep.include({
      unsafe_allow_api_audit_creation: true,
      allow_audit_log_prefixing: false,
      api_audit_socket_allowlist: ['127.0.0.1:9090'],
      audits: [{ path: 'to-file/', type: 'file', description: 'main' }],
    });
    expect(JSON.stringify(shown)).not.to.contain('/var/log/keywarden');
    expect(sanitizedConfig(loadConfig(hcl('', 'plain.hcl')))).to.deep.include({ unsafe_allow_api_audit_creation: false, allow_audit_log_prefixing: false, api_audit_socket_allowlist: [] });
  });
});
