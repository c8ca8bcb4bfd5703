/**
 * `keywarden completion bash|zsh`: the printed scripts are valid shell, and completing in them
 * offers the subcommands, the flags (vault's -flag= form) and the values of -format. Each script is
 * loaded into a real shell, which is then asked for completions as it would be at a prompt.
 */
import { expect } from 'chai';
import { execFileSync, spawnSync } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { runCli } from '../../../helpers/cli.js';
import { tempDir } from '../../../helpers/server.js';

function hasShell(shell: string): boolean {
  return spawnSync(shell, ['-c', 'true']).status === 0;
}

describe('keywarden completion', function () {
  this.timeout(30_000);
  let dir: { path: string; remove: () => Promise<void> };
  const env = (): NodeJS.ProcessEnv => ({ PATH: process.env.PATH, HOME: dir.path });

  before(async () => {
    dir = await tempDir();
  });
  after(async () => {
    await dir.remove();
  });

  async function script(shell: 'bash' | 'zsh'): Promise<string> {
    const run = await runCli(['completion', shell], env());
    expect(run.code, run.stderr).to.equal(0);
    const file = path.join(dir.path, `keywarden.${shell}`);
    await writeFile(file, run.stdout);
    return file;
  }

  describe('bash', () => {
    let file: string;
    before(async function () {
      if (!hasShell('bash')) this.skip();
      file = await script('bash');
    });

    /** What bash offers for `line` (the cursor at its end), through the script's completion function. */
    function complete(line: string): string[] {
      const driver = `
        source "$1"
        COMP_LINE="$2"; COMP_POINT=\${#2}
        read -ra COMP_WORDS <<< "$2"
        [[ "$2" == *" " ]] && COMP_WORDS+=("")
        COMP_CWORD=$(( \${#COMP_WORDS[@]} - 1 ))
        _keywarden
        printf '%s\\n' "\${COMPREPLY[@]}"`;
      return execFileSync('bash', ['-c', driver, 'driver', file, line], { encoding: 'utf8' }).split('\n').filter(Boolean);
    }

    it('is valid bash (bash -n)', () => {
      expect(spawnSync('bash', ['-n', file]).status).to.equal(0);
    });

    it('completes the commands and the subcommands of a group', () => {
      expect(complete('keywarden ')).to.include.members(['read', 'write', 'operator', 'token', 'path-help', 'completion']);
      expect(complete('keywarden op')).to.deep.equal(['operator']);
      expect(complete('keywarden operator ')).to.have.members(['init', 'unseal', 'seal', 'step-down', 'rekey', 'generate-root', 'rotate', 'key-status', 'raft', 'snapshot']);
      expect(complete('keywarden operator raft snapshot ')).to.have.members(['save', 'restore']);
      expect(complete('keywarden token ca')).to.deep.equal(['capabilities']);
    });

    it("completes a command's flags in vault's -flag= form, the TLS flags included", () => {
      expect(complete('keywarden read -form')).to.deep.equal(['-format=']);
      expect(complete('keywarden read -tls-')).to.have.members(['-tls-server-name=', '-tls-skip-verify']);
      expect(complete('keywarden token create -po')).to.deep.equal(['-policy=']);
      expect(complete('keywarden read -field=x -ad')).to.deep.equal(['-address=']);
    });

    it('completes the values of -format and files for -ca-cert', () => {
      expect(complete('keywarden read -format=')).to.have.members(['table', 'json', 'yaml']);
      expect(complete('keywarden read -format=y')).to.deep.equal(['yaml']);
      expect(complete(`keywarden read -ca-cert=${path.join(dir.path, 'keywarden.b')}`)).to.deep.equal([file]);
    });

    it('completes every login method login -method= knows', () => {
      expect(complete('keywarden login -method=')).to.have.members(['token', 'cloud', 'aws', 'oidc', 'jwt', 'kubernetes', 'userpass', 'approle']);
    });
  });

  describe('zsh', () => {
    let file: string;
    before(async function () {
      if (!hasShell('zsh')) this.skip();
      file = await script('zsh');
    });

    /**
     * What the script's completion function hands zsh for `line`. compadd and _files only work
     * inside a completion widget, so they are replaced by functions that print what they are given.
     */
    function complete(line: string): string[] {
      const driver = `
        autoload -U compinit && compinit -u -D
        source "$1"
        compadd() { while [[ $1 != -- ]]; do shift; done; shift; print -rl -- "$@"; }
        compset() { :; }
        _files() { print -r -- "(files $*)"; }
        words=(\${=2}); [[ $2 == *' ' ]] && words+=('')
        CURRENT=\${#words}
        _keywarden`;
      return execFileSync('zsh', ['-f', '-c', driver, 'driver', file, line], { encoding: 'utf8' }).split('\n').filter(Boolean);
    }

    it('is valid zsh (zsh -n)', () => {
      expect(spawnSync('zsh', ['-n', file]).status).to.equal(0);
    });

    it('completes commands, subcommands, flags and the values of -format', () => {
      expect(complete('keywarden ')).to.include.members(['read', 'operator', 'path-help']);
      expect(complete('keywarden operator ')).to.have.members(['init', 'unseal', 'seal', 'step-down', 'rekey', 'generate-root', 'rotate', 'key-status', 'raft', 'snapshot']);
      expect(complete('keywarden operator raft snapshot ')).to.have.members(['save', 'restore']);
      expect(complete('keywarden read -')).to.include.members(['-format=', '-field=', '-ca-cert=', '-tls-skip-verify']);
      expect(complete('keywarden read -format=')).to.have.members(['table', 'json', 'yaml']);
      expect(complete('keywarden read -ca-path=')).to.deep.equal(['(files -/)']);
    });
  });

  it('refuses a shell it has no script for, exit 1', async () => {
    const run = await runCli(['completion', 'fish'], env());
    expect(run.code).to.equal(1);
    expect(run.stderr).to.contain('use bash or zsh');
  });
});
