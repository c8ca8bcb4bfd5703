import { expect } from 'chai';
import { PathPattern } from '../../../core/framework/path.js';

const match = (pattern: string, path: string) => new PathPattern(pattern).match(path);

describe('framework path patterns', () => {
  describe('literals', () => {
    it('match exactly the same path', () => {
      expect(match('config/cache', 'config/cache')).to.deep.equal({});
    });

    it('do not match a longer or shorter path, or another case', () => {
      expect(match('config/cache', 'config/cache/x')).to.equal(undefined);
      expect(match('config/cache', 'config')).to.equal(undefined);
      expect(match('config/cache', 'Config/Cache')).to.equal(undefined);
    });

    it('treat "." in a literal as a dot, not as any character', () => {
      expect(match('v1.0/info', 'v1.0/info')).to.deep.equal({});
      expect(match('v1.0/info', 'v1x0/info')).to.equal(undefined);
    });
  });

  describe(':name', () => {
    it('captures exactly one segment', () => {
      expect(match('keys/:name', 'keys/my-key')).to.deep.equal({ name: 'my-key' });
      expect(match('keys/:name', 'keys/a/b')).to.equal(undefined);
    });

    it('never captures an empty segment', () => {
      expect(match('keys/:name', 'keys/')).to.equal(undefined);
      expect(match('keys/:name/rotate', 'keys//rotate')).to.equal(undefined);
    });

    it('refuses a segment that ends in "." (Vault answers 404 for it)', () => {
      expect(match('keys/:name', 'keys/my-key.')).to.equal(undefined);
      expect(match('keys/:name', 'keys/v1.2')).to.deep.equal({ name: 'v1.2' });
    });

    it('refuses a segment that ends in "." even when the parameter shares its name with a literal', () => {
      expect(match('role/:role', 'role/admin.')).to.equal(undefined);
      expect(match('role/:role', 'role/admin')).to.deep.equal({ role: 'admin' });
    });

    it('captures several segments in one pattern', () => {
      expect(match('export/:type/:name/:version', 'export/encryption-key/k1/3')).to.deep.equal({
        type: 'encryption-key', name: 'k1', version: '3',
      });
    });
  });

  describe(':name?', () => {
    it('matches with and without the last segment', () => {
      expect(match('export/:type/:name/:version?', 'export/hmac-key/k1')).to.deep.equal({ type: 'hmac-key', name: 'k1' });
      expect(match('export/:type/:name/:version?', 'export/hmac-key/k1/latest')).to.deep.equal({ type: 'hmac-key', name: 'k1', version: 'latest' });
    });

    it('does not match a trailing slash with nothing after it', () => {
      expect(match('keys/:name?', 'keys/')).to.equal(undefined);
    });

    it('may be the only segment', () => {
      expect(match(':name?', '')).to.deep.equal({});
      expect(match(':name?', 'x')).to.deep.equal({ name: 'x' });
    });

    it('must be the last segment', () => {
      expect(() => new PathPattern('keys/:name?/rotate')).to.throw('an optional segment must be last');
    });
  });

  describe(':name+', () => {
    it('spans one or more segments', () => {
      expect(match('notes/:name+', 'notes/a')).to.deep.equal({ name: 'a' });
      expect(match('notes/:name+', 'notes/a/b/c')).to.deep.equal({ name: 'a/b/c' });
    });

    it('may be followed by literals', () => {
      expect(match('mounts/:path+/tune', 'mounts/crypto/eu/tune')).to.deep.equal({ path: 'crypto/eu' });
      expect(match('mounts/:path+/tune', 'mounts/tune')).to.equal(undefined);
    });

    it('refuses empty segments inside the span', () => {
      expect(match('notes/:name+', 'notes/a//b')).to.equal(undefined);
      expect(match('notes/:name+', 'notes/')).to.equal(undefined);
    });
  });

  describe(':name*', () => {
    it('captures the rest of the path, slashes included', () => {
      expect(match('raw/:path*', 'raw/logical/abc/key')).to.deep.equal({ path: 'logical/abc/key' });
    });

    it('needs at least one character', () => {
      expect(match('raw/:path*', 'raw/')).to.equal(undefined);
    });

    it('must be the last segment', () => {
      expect(() => new PathPattern('raw/:path*/x')).to.throw('a rest segment must be last');
    });
  });

  describe('listing patterns (trailing "/")', () => {
    it('match the path with and without the trailing slash', () => {
      const pattern = new PathPattern('keys/');
      expect(pattern.listing).to.equal(true);
      expect(pattern.match('keys/')).to.deep.equal({});
      expect(pattern.match('keys')).to.deep.equal({});
      expect(pattern.match('keys/x')).to.equal(undefined);
    });

    it('work under a parameter', () => {
      expect(match('notes/:folder+/', 'notes/a/b/')).to.deep.equal({ folder: 'a/b' });
    });

    it('a lone "/" is the mount root', () => {
      expect(match('/', '')).to.deep.equal({});
      expect(match('/', '/')).to.deep.equal({});
      expect(match('/', 'x')).to.equal(undefined);
    });
  });

  describe('refused patterns', () => {
    it('a parameter name that is not a word', () => {
      expect(() => new PathPattern('keys/:na-me')).to.throw('bad parameter ":na-me"');
      expect(() => new PathPattern('keys/:')).to.throw('bad parameter');
    });

    it('a literal with characters outside letters, digits, "_", "-" and "."', () => {
      expect(() => new PathPattern('keys/a b')).to.throw('bad literal segment "a b"');
      expect(() => new PathPattern('keys//x')).to.throw('bad literal segment ""');
    });
  });

  describe('specificity', () => {
    const specificity = (pattern: string) => new PathPattern(pattern).specificity;

    it('ranks a literal above a parameter, above an optional, above a span, above a rest', () => {
      const ranked = ['a/b', 'a/:x', 'a/:x?', 'a/:x+', 'a/:x*'].map(specificity);
      expect(ranked).to.deep.equal([...ranked].sort((x, y) => y - x));
      expect(new Set(ranked).size).to.equal(ranked.length);
    });

    it('ranks a longer literal prefix above any number of parameters after a shorter one', () => {
      expect(specificity('keys/rotate/:x*')).to.be.greaterThan(specificity('keys/:a/:b/:c/:d'));
    });

    it('ranks a listing pattern just above the same pattern without the slash', () => {
      expect(specificity('keys/')).to.equal(specificity('keys') + 1);
    });
  });

  it('lists its parameters in order', () => {
    expect(new PathPattern('export/:type/:name/:version?').params).to.deep.equal(['type', 'name', 'version']);
  });

  it('writes OpenAPI paths with {name} placeholders', () => {
    expect(new PathPattern('keys/:name/rotate').openApiPath()).to.equal('keys/{name}/rotate');
    expect(new PathPattern('notes/:folder+/').openApiPath()).to.equal('notes/{folder}/');
  });
});
