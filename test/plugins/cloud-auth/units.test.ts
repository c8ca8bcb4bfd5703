/** Pure pieces of the cloud auth method: ARN parsing and globs, request decoding, the STS answer, regions. */
import { expect } from 'chai';
import { globbedStringsMatch as globMatches } from '../../../core/framework/glob.js';
import { ArnError, canonicalArn, displayNameOf, parseIamArn, prefixOrExactMatches } from '../../../plugins/cloud-auth/arn.js';
import { HeaderList, decodeBase64, parseForm, stsEndpointFor, type CallerIdentityRequest } from '../../../plugins/cloud-auth/iam-request.js';
import { parseCallerIdentity } from '../../../plugins/cloud-auth/sts.js';
import { iamRegionForPartition, regionalStsEndpoint } from '../../../plugins/cloud-auth/regions.js';
import { emptyClientConfig } from '../../../plugins/cloud-auth/client-config.js';
import { canonicalHeaderKey } from '../../../plugins/cloud-auth/input.js';

describe('cloud auth units', () => {
  describe('ARNs', () => {
    it('parses users, roles, instance profiles and assumed roles, keeping paths apart', () => {
      expect(parseIamArn('arn:aws:iam::123456789012:user/UserPath/MyUserName')).to.deep.equal({
        partition: 'aws', accountId: '123456789012', type: 'user', path: 'UserPath', friendlyName: 'MyUserName', sessionName: '',
      });
      const assumed = parseIamArn('arn:aws:sts::123456789012:assumed-role/RoleName/RoleSessionName');
      expect(assumed).to.include({ type: 'assumed-role', friendlyName: 'RoleName', sessionName: 'RoleSessionName', path: '' });
      expect(canonicalArn(assumed)).to.equal('arn:aws:iam::123456789012:role/RoleName');
      expect(displayNameOf(assumed)).to.equal('RoleName/RoleSessionName');
      expect(canonicalArn(parseIamArn('arn:aws-us-gov:iam::123456789012:role/a/b/RoleName'))).to.equal('arn:aws-us-gov:iam::123456789012:role/RoleName');
      expect(parseIamArn('arn:aws:iam::123456789012:instance-profile/profilePath/InstanceProfileName')).to.include({ type: 'instance-profile', path: 'profilePath' });
    });

    it('refuses malformed ARNs with a message that names the part', () => {
      const cases: [string, string][] = [
        ['', 'contains 1 colon-separated parts, expected 6'],
        ['arn:aws:iam', 'contains 3 colon-separated parts'],
        ['arn:aws:iam::123456789012:role', 'fewer than 2 slash-separated parts'],
        ['arn:aws:iam::1234556789012:/', 'unrecognized principal type: ""'],
        ['arn:aws:sts::1234556789012:assumed-role/role', 'fewer than 3 slash-separated parts'],
        ['arn:aws:s3::123:user/x', 'unrecognized service: s3, not one of iam or sts'],
        ['urn:aws:iam::123:user/x', 'does not begin with "arn:"'],
        ['arn:aws:iam::123:group/x', 'unrecognized principal type: "group"'],
      ];
      for (const [arn, message] of cases) expect(() => parseIamArn(arn), arn).to.throw(ArnError, message);
    });

    it('globs as Vault does: prefix, suffix, contains, and a bare * matches nothing', () => {
      expect(globMatches('arn:aws:iam::123:role/*', 'arn:aws:iam::123:role/path/x')).to.equal(true);
      expect(globMatches('*:role/x', 'arn:aws:iam::123:role/x')).to.equal(true);
      expect(globMatches('*iam::123*', 'arn:aws:iam::123:user/x')).to.equal(true);
      expect(globMatches('*', 'anything')).to.equal(false);
      expect(globMatches('arn:aws:iam::123:user/x', 'arn:aws:iam::123:user/x')).to.equal(true);
      expect(prefixOrExactMatches('arn:aws:iam::1:role/a*', 'arn:aws:iam::1:role/ab')).to.equal(true);
      expect(prefixOrExactMatches('arn:*:iam::1:role/a', 'arn:aws:iam::1:role/a')).to.equal(false);
    });
  });

  describe('login request decoding', () => {
    it('reads base64 strictly and forms as Go does', () => {
      expect(decodeBase64('aGVsbG8=')?.toString()).to.equal('hello');
      expect(decodeBase64('aGVsbG8')).to.equal(undefined);
      expect(decodeBase64('a$==')).to.equal(undefined);
      expect([...parseForm('Action=GetCallerIdentity&Version=2011-06-15&x=a+b%20c')!]).to.deep.equal([
        ['Action', ['GetCallerIdentity']], ['Version', ['2011-06-15']], ['x', ['a b c']],
      ]);
      expect(parseForm('a=%zz')).to.equal(undefined);
      expect(parseForm('a=1;b=2')).to.equal(undefined);
    });

    it('canonicalises header names like Go and looks them up without case', () => {
      expect(canonicalHeaderKey('x-amz-security-token')).to.equal('X-Amz-Security-Token');
      expect(canonicalHeaderKey('X-AMZ-DATE')).to.equal('X-Amz-Date');
      const headers = new HeaderList({ authorization: ['a'], Authorization: ['b'] });
      expect(headers.get('AUTHORIZATION')).to.deep.equal(['a', 'b']);
    });

    it('sends logins to the configured endpoint, or the known regional endpoint of the signed region', () => {
      const request = (auth: string): CallerIdentityRequest => ({
        method: 'POST', url: new URL('https://attacker.example/'), body: '', headers: new HeaderList({ Authorization: [auth] }),
      });
      const signedFor = (region: string) => request(`AWS4-HMAC-SHA256 Credential=AKIA/20240101/${region}/sts/aws4_request, SignedHeaders=host, Signature=00`);
      expect(stsEndpointFor(undefined, signedFor('us-east-1'))).to.equal('https://sts.amazonaws.com');
      expect(stsEndpointFor({ ...emptyClientConfig(), sts_endpoint: 'http://127.0.0.1:9' }, signedFor('us-east-1'))).to.equal('http://127.0.0.1:9');
      const fromClient = { ...emptyClientConfig(), sts_endpoint: 'http://127.0.0.1:9', use_sts_region_from_client: true };
      expect(stsEndpointFor(fromClient, signedFor('us-west-2'))).to.equal('https://sts.us-west-2.amazonaws.com');
      expect(stsEndpointFor(fromClient, signedFor('cn-north-1'))).to.equal('https://sts.cn-north-1.amazonaws.com.cn');
      expect(() => stsEndpointFor(fromClient, signedFor('attacker.example#'))).to.throw('unable to get regional STS endpoint for region: attacker.example#');
      expect(() => stsEndpointFor(fromClient, request('AWS4-HMAC-SHA256 SignedHeaders=host'))).to.throw('region missing from Authorization header');
    });

    it('knows the IAM region of each partition', () => {
      expect(iamRegionForPartition('aws')).to.equal('us-east-1');
      expect(iamRegionForPartition('aws-us-gov')).to.equal('us-gov-west-1');
      expect(iamRegionForPartition('aws-cn')).to.equal('cn-north-1');
      expect(iamRegionForPartition('mars')).to.equal(undefined);
      expect(regionalStsEndpoint('us-gov-east-1')).to.equal('https://sts.us-gov-east-1.amazonaws.com');
    });
  });

  describe('STS answers', () => {
    const answer = (result: string) =>
      `<GetCallerIdentityResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/">\n  <GetCallerIdentityResult>\n${result}  </GetCallerIdentityResult>\n</GetCallerIdentityResponse>`;

    it('reads the caller, keeping the account ID a string', async () => {
      const xml = answer('<Arn>arn:aws:sts::012345678901:assumed-role/R/S</Arn><UserId>AROAEXAMPLE:S</UserId><Account>012345678901</Account>');
      expect(await parseCallerIdentity(xml)).to.deep.equal({ arn: 'arn:aws:sts::012345678901:assumed-role/R/S', userId: 'AROAEXAMPLE:S', account: '012345678901' });
      expect(await parseCallerIdentity(`<?xml version="1.0"?>\n${xml}`)).to.have.property('account', '012345678901');
    });

    it('refuses anything else: JSON, other documents, missing fields, entity declarations', async () => {
      expect(await parseCallerIdentity('{"GetCallerIdentityResponse":{}}')).to.equal(undefined);
      expect(await parseCallerIdentity('<ErrorResponse><Error/></ErrorResponse>')).to.equal(undefined);
      expect(await parseCallerIdentity(answer('<Arn>arn:aws:iam::1:user/x</Arn><Account>1</Account>'))).to.equal(undefined);
      expect(await parseCallerIdentity('<?xml version="1.0"?><!DOCTYPE x [<!ENTITY a "b">]><GetCallerIdentityResponse/>')).to.equal(undefined);
      expect(await parseCallerIdentity('<GetCallerIdentityResponse><unclosed>')).to.equal(undefined);
    });
  });
});
