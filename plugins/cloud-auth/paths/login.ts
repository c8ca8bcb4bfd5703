/** `login`: exchange a signed GetCallerIdentity request (iam) or a signed identity document (ec2) for a token. */
import { definePath, type AnyPathDefinition, type LogicalRequest, BadRequestError } from '../../../sdk/index.js';
import type { CloudAuthContext } from '../context.js';
import { present } from '../input.js';
import { loginIam } from '../login-iam.js';
import { loginEc2 } from '../login-ec2.js';

const EC2_FIELDS = ['pkcs7', 'identity', 'signature'] as const;
const IAM_FIELDS = ['iam_http_request_method', 'iam_request_url', 'iam_request_body', 'iam_request_headers'] as const;

export function loginPath(ctx: CloudAuthContext): AnyPathDefinition {
  return definePath({
    pattern: 'login',
    unauthenticated: true,
    fields: {
      role: { type: 'string', description: "Role to log in against; default: the principal's friendly name (iam) or the AMI ID (ec2)." },
      pkcs7: { type: 'string', description: 'ec2: PKCS#7 signature of the identity document, newlines removed.' },
      identity: { type: 'string', description: 'ec2: base64 instance identity document (with signature).' },
      signature: { type: 'string', description: 'ec2: base64 SHA256 RSA signature of the identity document.' },
      nonce: {
        type: 'string',
        description: 'ec2: the client nonce for reauthentication; absent: the server makes one and returns it; "": no reauthentication.',
      },
      iam_http_request_method: { type: 'string', description: 'iam: method of the signed request, GET or POST.' },
      iam_request_url: { type: 'string', description: 'iam: base64 URL of the signed request.' },
      iam_request_body: { type: 'string', description: 'iam: base64 body of the signed request (POST).' },
      iam_request_headers: { type: 'header-map', description: 'iam: headers of the signed request, a JSON object or base64 JSON.' },
    },
    operations: {
      update: {
        summary: 'Log in.',
        handler: async (req, input) => {
          const kind = proofStyle(req);
          return { auth: kind === 'ec2' ? await loginEc2(ctx, req, input) : await loginIam(ctx, req, input) };
        },
      },
    },
    synopsis: 'Log in with a cloud identity.',
    description:
      'iam: send the method, base64 URL, base64 body and headers of a signed STS GetCallerIdentity request; the server ' +
      'forwards it to its configured STS endpoint and matches the principal against the role. ec2: send a signed instance ' +
      'identity document (pkcs7, or identity and signature).',
  });
}

/** Which proof the request carries; an empty field still counts as sent, so it can be reported as missing. */
function proofStyle(req: LogicalRequest): 'ec2' | 'iam' {
  const anyEc2 = EC2_FIELDS.some((f) => present(req, f));
  const allEc2 = present(req, 'pkcs7') || (present(req, 'identity') && present(req, 'signature'));
  const anyIam = IAM_FIELDS.some((f) => present(req, f));
  const allIam =
    present(req, 'iam_http_request_method') &&
    present(req, 'iam_request_url') &&
    present(req, 'iam_request_headers') &&
    (req.data.iam_http_request_method === 'GET' || present(req, 'iam_request_body'));
  if (anyEc2 && anyIam) throw new BadRequestError('supplied auth values for both ec2 and iam auth types');
  if (anyEc2 && !allEc2) throw new BadRequestError('supplied some of the auth values for the ec2 auth type but not all');
  if (anyEc2) return 'ec2';
  if (anyIam && !allIam) throw new BadRequestError('supplied some of the auth values for the iam auth type but not all');
  if (anyIam) return 'iam';
  throw new BadRequestError("didn't supply required authentication values");
}
