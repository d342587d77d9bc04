/** How sure the classifier is about a result. */
export type Confidence = 'low' | 'medium' | 'high';

/** Identifier of the rule that produced a result (see CLASSIFIER_RULES / README). */
export type RuleId =
  | 'click_id'
  | 'fbclid_ad_referrer'
  | 'fbclid_utm_source'
  | 'paid_utm_medium'
  | 'fbclid_only'
  | 'utm_source'
  | 'facebook_referrer'
  | 'social_referrer'
  | 'search_referrer'
  | 'email_referrer'
  | 'internal'
  | 'direct'
  | 'referral';

export interface ClassifyInput {
  /** The page URL of the event (its query string carries click ids and utm_* parameters). */
  url?: string | null;
  /** The document referrer. */
  referrer?: string | null;
  /** The HTTP Host header of the request (may include a port); used when `url` has no host. */
  requestHost?: string | null;
}

export interface ClassifiedSource {
  source: string;
  medium: string;
  /** utm_campaign (trimmed, case preserved); the key is absent when there is none. */
  campaign?: string;
  confidence: Confidence;
  rule_id: RuleId;
}

export interface RuleDescription {
  order: number;
  rule_id: RuleId;
  condition: string;
  result: string;
}
