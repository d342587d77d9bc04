export type { ClassifiedSource, ClassifyInput, Confidence, RuleDescription, RuleId } from './lib/types';
export { classify } from './lib/classify';
export { CLASSIFIER_RULES } from './lib/rules';
