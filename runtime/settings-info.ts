/** The types of environment settings in the seeds' tables. */
export type SettingType = 'String' | 'Boolean' | 'Integer' | 'Float' | 'Duration';

/** Which programs read a setting. */
export type Program = 'pilot-discovery' | 'pilot-agent' | 'meshctl';

/** A setting as introspection shows it: values rendered in the seeds' style (`100ms`, `24h0m0s`). */
export interface SettingInfo {
  name: string;
  type: SettingType;
  default: string;
  value: string;
  /** True when the environment set the value. */
  isSet: boolean;
  meaning: string;
}
