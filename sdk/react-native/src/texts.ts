// The words of the default UI, all from the published config (/api/sdk/v2/config): the notice in the person's
// language and the service's built-in `ui` strings for that language (a project's own translations over them,
// every key present). The package has no words of its own, so a banner never mixes two languages.
import type { Category, ConsentConfig, Purpose } from '@consent/core';

export interface Texts {
  title: string;
  description: string;
  companyName: string;
  acceptAll: string;
  rejectAll: string;
  manage: string;
  saveChoices: string;
  alwaysOn: string;
  close: string;
  dialogTitle: string;
  privacyPolicy: string;
  /** Opt-out mode's control and the dismiss button of opt-out and notice modes. */
  doNotSell: string;
  noticeOk: string;
  /** Said under the notice and atop the preferences when signed in: the choice applies on the person's signed-in devices. */
  signedInScope: string;
  /** http(s) only; '' when the project has none (the link is then left out). */
  privacyPolicyUrl: string;
  rtl: boolean;
  locale: string;
}

export function texts(config: ConsentConfig): Texts {
  const { notice } = config.config;
  const ui = (key: string) => config.ui[key] ?? '';
  const url = config.experience.privacyPolicyUrl;
  return {
    title: notice.title,
    description: notice.description,
    companyName: notice.companyName,
    // A label the project did not translate comes empty in another language: the built-in string stands in.
    acceptAll: notice.acceptLabel || ui('acceptAll'),
    rejectAll: notice.rejectLabel || ui('rejectAll'),
    manage: notice.manageLabel || ui('manage'),
    saveChoices: ui('saveChoices'),
    alwaysOn: ui('alwaysOn'),
    close: ui('close'),
    dialogTitle: ui('dialogTitle') || notice.title,
    privacyPolicy: ui('privacyPolicy'),
    doNotSell: ui('doNotSell'),
    noticeOk: ui('noticeOk'),
    signedInScope: ui('signedInScope'),
    privacyPolicyUrl: /^https?:\/\//.test(url) ? url : '',
    rtl: config.dir === 'rtl',
    locale: config.locale,
  };
}

export interface PurposeGroup {
  /** '' for purposes whose category the version does not list. */
  name: string;
  purposes: Purpose[];
}

/** Purposes grouped by category, both in the operator's sort order (as the browser SDK's dialog shows them). */
export function groups(config: ConsentConfig): PurposeGroup[] {
  const { purposes, categories } = config.config;
  const bySortOrder = (a: { sortOrder: number }, b: { sortOrder: number }) => a.sortOrder - b.sortOrder;
  const known = new Set(categories.map((c: Category) => c.id));
  const list: PurposeGroup[] = [...categories].sort(bySortOrder).map((c) => ({ name: c.name, purposes: purposes.filter((p) => p.categoryId === c.id) }));
  list.push({ name: '', purposes: purposes.filter((p) => !known.has(p.categoryId)) });
  return list.filter((g) => g.purposes.length).map((g) => ({ ...g, purposes: [...g.purposes].sort(bySortOrder) }));
}
