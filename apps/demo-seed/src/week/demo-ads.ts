/**
 * Ads of catalog/sample-catalog.json that the demo's recommendations carry, with what a click
 * and a sale earn the platform (micros). Fixed here rather than read from the file: the week
 * must not change when the sample catalog does.
 */
export interface DemoAd {
  ad_id: string;
  product_id: string;
  /** Earned per click (cost-per-click share). */
  click_micros: number;
  /** Earned per sale (commission). */
  sale_micros: number;
  /** Relative share of the recommendations. */
  weight: number;
}

export const DEMO_ADS: readonly DemoAd[] = [
  { ad_id: 'ad_run_trail_01', product_id: 'prod_stridelab_trailfox', click_micros: 420_000, sale_micros: 6_450_000, weight: 5 },
  { ad_id: 'ad_run_road_02', product_id: 'prod_stridelab_cloudpace', click_micros: 380_000, sale_micros: 5_950_000, weight: 4 },
  { ad_id: 'ad_coffee_espresso_07', product_id: 'prod_crema_home_espresso', click_micros: 610_000, sale_micros: 19_950_000, weight: 2 },
  { ad_id: 'ad_laptop_ultra_10', product_id: 'prod_aerobook_14', click_micros: 950_000, sale_micros: 32_970_000, weight: 2 },
  { ad_id: 'ad_travel_esim_17', product_id: 'prod_globelink_esim', click_micros: 160_000, sale_micros: 450_000, weight: 3 },
  { ad_id: 'ad_audio_anc_21', product_id: 'prod_hush_anc_pro', click_micros: 520_000, sale_micros: 11_160_000, weight: 3 },
];
