import { CLASSIFIER_RULES, RULE_IDS } from './rules';

describe('CLASSIFIER_RULES', () => {
  it('describes the 13 rules in order', () => {
    expect(CLASSIFIER_RULES).toHaveLength(13);
    expect(CLASSIFIER_RULES.map((r) => r.order)).toStrictEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13]);
    expect(CLASSIFIER_RULES.map((r) => r.rule_id)).toStrictEqual([...RULE_IDS]);
  });

  it('has a condition and a result for every rule', () => {
    for (const rule of CLASSIFIER_RULES) {
      expect(rule.condition.length).toBeGreaterThan(10);
      expect(rule.result.length).toBeGreaterThan(10);
    }
  });

  it('is frozen', () => {
    expect(Object.isFrozen(CLASSIFIER_RULES)).toBe(true);
    for (const rule of CLASSIFIER_RULES) expect(Object.isFrozen(rule)).toBe(true);
  });
});
