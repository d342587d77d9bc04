export type { ClassifiedSource, ClassifyInput, Confidence, RuleDescription, RuleId } from './lib/types';
export { classify } from './lib/classify';
export { CLASSIFIER_RULES } from './lib/rules';
export { channelOf, CHANNELS, type Channel } from './lib/channel';
export { CHANNEL_RULES, type ChannelRuleDescription } from './lib/channel-rules';
export { aiAssistantOf, aiAssistantOfSource, AI_ASSISTANTS, type AiAssistantEntry } from './lib/ai-assistants';
export { sourceKeyOf, sourceLabelOf } from './lib/source-names';
