export * from './anomaly';
export * from './address-guard';
export * from './channels';
export * from './evaluate';
export * from './messages';
export * from './deliveries';
export * from './alerts-job';
export * from './seasonal-traffic';
