/**
 * The provider's partitions and their known regions: which region an IAM call for a partition
 * goes to (IAM is global per partition), and the regional STS endpoint for a client's region when
 * `use_sts_region_from_client` is on. Only known regions count, so a client cannot name an
 * arbitrary host through the region of its signature.
 */

interface Partition {
  readonly name: string;
  /** DNS suffix of the partition's endpoints. */
  readonly dnsSuffix: string;
  /** The region IAM (a global service) is reached through. */
  readonly iamRegion: string;
  readonly regions: readonly string[];
}

const PARTITIONS: readonly Partition[] = [
  {
    name: 'aws',
    dnsSuffix: 'amazonaws.com',
    iamRegion: 'us-east-1',
    regions: [
      'af-south-1', 'ap-east-1', 'ap-east-2', 'ap-northeast-1', 'ap-northeast-2', 'ap-northeast-3', 'ap-south-1', 'ap-south-2',
      'ap-southeast-1', 'ap-southeast-2', 'ap-southeast-3', 'ap-southeast-4', 'ap-southeast-5', 'ap-southeast-6', 'ap-southeast-7',
      'ca-central-1', 'ca-west-1', 'eu-central-1', 'eu-central-2', 'eu-north-1', 'eu-south-1', 'eu-south-2', 'eu-west-1',
      'eu-west-2', 'eu-west-3', 'il-central-1', 'me-central-1', 'me-south-1', 'mx-central-1', 'sa-east-1', 'us-east-1',
      'us-east-2', 'us-west-1', 'us-west-2',
    ],
  },
  { name: 'aws-cn', dnsSuffix: 'amazonaws.com.cn', iamRegion: 'cn-north-1', regions: ['cn-north-1', 'cn-northwest-1'] },
  { name: 'aws-us-gov', dnsSuffix: 'amazonaws.com', iamRegion: 'us-gov-west-1', regions: ['us-gov-east-1', 'us-gov-west-1'] },
  { name: 'aws-iso', dnsSuffix: 'c2s.ic.gov', iamRegion: 'us-iso-east-1', regions: ['us-iso-east-1', 'us-iso-west-1'] },
  { name: 'aws-iso-b', dnsSuffix: 'sc2s.sgov.gov', iamRegion: 'us-isob-east-1', regions: ['us-isob-east-1'] },
];

/** The global STS endpoint, used when `config/client` names none. */
export const DEFAULT_STS_ENDPOINT = 'https://sts.amazonaws.com';

/** The region IAM calls for a partition go to, or undefined for an unknown partition. */
export function iamRegionForPartition(partition: string): string | undefined {
  return PARTITIONS.find((p) => p.name === partition)?.iamRegion;
}

/** The regional STS endpoint of a known region (`https://sts.us-west-2.amazonaws.com`), else undefined. */
export function regionalStsEndpoint(region: string): string | undefined {
  const partition = PARTITIONS.find((p) => p.regions.includes(region));
  return partition ? `https://sts.${region}.${partition.dnsSuffix}` : undefined;
}
