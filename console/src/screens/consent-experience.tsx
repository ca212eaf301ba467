// The experience part of the consent editor: translations side by side with the default texts, the Google
// Consent Mode mapping, cookies per purpose, the theme and the other settings the SDK v2 uses. Saved as one
// object (updateConsentExperience); fields this editor does not know are sent back as they came.
import { TableBox } from '../components/table-box';
import { useState, type FormEvent } from 'react';
import { useMutation } from 'urql';
import { Link } from 'wouter';
import { ErrorState } from '../components/states';
import { SaveConsentExperienceDocument } from '../graphql/generated';
import { useProjectContext } from '../lib/context';
import { paths } from '../lib/screen';
import {
  ALWAYS_GRANTED_SIGNALS,
  GOOGLE_SIGNALS,
  INTEGRATION_NAMES,
  INTEGRATION_SIGNALS,
  INTEGRATION_TYPES,
  type DraftForm,
  type Experience,
  type Integration,
  type Translation,
} from '../lib/consent-model';

interface Props {
  projectId: string;
  form: DraftForm;
  draftDirty: boolean;
  experience: Experience;
  saved: Experience;
  onChange: (experience: Experience) => void;
  readOnly: boolean;
}

export function ExperienceEditor({ projectId, form, draftDirty, experience, saved, onChange, readOnly }: Props) {
  const [saving, save] = useMutation(SaveConsentExperienceDocument);
  const dirty = JSON.stringify(experience) !== JSON.stringify(saved);
  const set = (patch: Partial<Experience>) => onChange({ ...experience, ...patch });
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    await save({ projectId, input: experience });
  };
  const savedKeys = form.purposes.filter((p) => p.saved && p.key);
  return (
    <form onSubmit={submit} aria-label="Experience">
      {draftDirty && (
        <p className="note" role="note">
          The purposes and notice have unsaved changes: save them first, the experience can only name saved purposes and categories.
        </p>
      )}
      <fieldset disabled={readOnly} className="plain">
        <legend className="visually-hidden">Experience</legend>
        <h2>Languages and links</h2>
        <div className="grid-2">
          <label>
            Default language (BCP 47)
            <input value={experience.defaultLocale} onChange={(e) => set({ defaultLocale: e.target.value })} required />
          </label>
          <label>
            Privacy policy link
            <input type="url" value={experience.privacyPolicyUrl} onChange={(e) => set({ privacyPolicyUrl: e.target.value })} placeholder="https://…" />
          </label>
          <label>
            Ask again after (days, 0 = never)
            <input type="number" min={0} max={395} value={experience.reconsentAfterDays} onChange={(e) => set({ reconsentAfterDays: Number(e.target.value) })} />
          </label>
        </div>

        <Translations form={form} experience={experience} onChange={onChange} readOnly={readOnly} />

        <h2 id="gcm-title">Google Consent Mode</h2>
        <label className="check">
          <input
            type="checkbox"
            checked={experience.googleConsentMode.enabled}
            onChange={(e) => set({ googleConsentMode: { ...experience.googleConsentMode, enabled: e.target.checked } })}
          />
          Send Google consent signals (gtag consent default and update)
        </label>
        <p className="hint">A signal is granted when every purpose ticked for it is granted; with none it stays denied (security_storage is always granted).</p>
        {savedKeys.length === 0 ? (
          <p className="state empty">Save purposes first to map them.</p>
        ) : (
          <TableBox layout="scroll" label="Google signals and purposes">
            <table aria-labelledby="gcm-title">
              <thead>
                <tr>
                  <th scope="col">Google signal</th>
                  {savedKeys.map((p) => (
                    <th key={p.key} scope="col">
                      {p.name || p.key}
                    </th>
                  ))}
                </tr>
              </thead>
              <tbody>
                {GOOGLE_SIGNALS.map((signal) => {
                  const mapped = experience.googleConsentMode.signals[signal] ?? [];
                  return (
                    <tr key={signal}>
                      <th scope="row">
                        <code>{signal}</code>
                      </th>
                      {savedKeys.map((p) => (
                        <td key={p.key}>
                          <input
                            type="checkbox"
                            aria-label={`${signal} needs ${p.name || p.key}`}
                            checked={mapped.includes(p.key)}
                            disabled={!experience.googleConsentMode.enabled || signal === 'security_storage'}
                            onChange={(e) =>
                              set({
                                googleConsentMode: {
                                  ...experience.googleConsentMode,
                                  signals: { ...experience.googleConsentMode.signals, [signal]: e.target.checked ? [...mapped, p.key] : mapped.filter((k) => k !== p.key) },
                                },
                              })
                            }
                          />
                        </td>
                      ))}
                    </tr>
                  );
                })}
              </tbody>
            </table>
          </TableBox>
        )}

        <Integrations experience={experience} savedKeys={savedKeys} onChange={onChange} />

        <TcfLink projectId={projectId} experience={experience} />

        <h2>Cookies</h2>
        <p className="hint">Cookies the SDK removes when a purpose is withdrawn: names separated by commas, * only at the end (_ga, _ga_*).</p>
        <div className="grid-2">
          {savedKeys.map((p) => (
            <label key={p.key}>
              {p.name || p.key}
              <input
                className="mono"
                value={(experience.cookies[p.key] ?? []).join(', ')}
                onChange={(e) => {
                  const names = e.target.value.split(',').map((n) => n.trim()).filter(Boolean);
                  const cookies = { ...experience.cookies };
                  if (names.length) cookies[p.key] = names;
                  else delete cookies[p.key];
                  set({ cookies });
                }}
              />
            </label>
          ))}
        </div>

        <h2>Global Privacy Control</h2>
        <p className="hint">Purposes turned off for visitors whose browser sends GPC.</p>
        <div className="row">
          {savedKeys
            .filter((p) => !p.required)
            .map((p) => (
              <label key={p.key} className="check">
                <input
                  type="checkbox"
                  checked={experience.gpc.optOutPurposes.includes(p.key)}
                  onChange={(e) =>
                    set({ gpc: { optOutPurposes: e.target.checked ? [...experience.gpc.optOutPurposes, p.key] : experience.gpc.optOutPurposes.filter((k) => k !== p.key) } })
                  }
                />
                {p.name || p.key}
              </label>
            ))}
        </div>

        <h2>Theme</h2>
        <div className="grid-2">
          <label>
            Colour scheme
            <select value={experience.theme.colorScheme} onChange={(e) => set({ theme: { ...experience.theme, colorScheme: e.target.value as Experience['theme']['colorScheme'] } })}>
              <option value="light">Light</option>
              <option value="dark">Dark</option>
              <option value="auto">Follow the visitor’s system</option>
            </select>
          </label>
          <label>
            Corner radius (0–24 px)
            <input type="number" min={0} max={24} value={experience.theme.borderRadius ?? 8} onChange={(e) => set({ theme: { ...experience.theme, borderRadius: Number(e.target.value) } })} />
          </label>
        </div>
      </fieldset>
      {!readOnly && (
        <div className="savebar">
          <button type="submit" className="primary" disabled={!dirty || draftDirty || saving.fetching}>
            {saving.fetching ? 'Saving…' : 'Save experience'}
          </button>
          <button type="button" disabled={!dirty} onClick={() => onChange(saved)}>
            Discard changes
          </button>
          <span role="status">{dirty ? 'Unsaved changes.' : saving.data && !saving.error ? 'Experience saved.' : ''}</span>
        </div>
      )}
      <ErrorState title="Saving the experience failed" error={saving.error} />
    </form>
  );
}

type NoticeField = keyof NonNullable<Translation['notice']>;
const NOTICE_FIELDS: [NoticeField, string][] = [
  ['title', 'Title'],
  ['description', 'Text'],
  ['acceptLabel', 'Accept button'],
  ['rejectLabel', 'Reject button'],
  ['manageLabel', 'Manage button'],
];

/** One language at a time, each text next to the default language's. */
function Translations({ form, experience, onChange, readOnly }: { form: DraftForm; experience: Experience; onChange: (e: Experience) => void; readOnly: boolean }) {
  const locales = Object.keys(experience.translations).filter((l) => l !== experience.defaultLocale);
  const [current, setCurrent] = useState(locales[0] ?? '');
  const [adding, setAdding] = useState('');
  const locale = locales.includes(current) ? current : (locales[0] ?? '');
  const translation: Translation = experience.translations[locale] ?? {};
  const setTranslation = (next: Translation) => onChange({ ...experience, translations: { ...experience.translations, [locale]: next } });
  const clean = (value: string) => (value === '' ? undefined : value);
  const add = () => {
    const tag = adding.trim();
    if (!tag || experience.translations[tag]) return;
    onChange({ ...experience, translations: { ...experience.translations, [tag]: {} } });
    setCurrent(tag);
    setAdding('');
  };
  const remove = () => {
    const { [locale]: _gone, ...rest } = experience.translations;
    onChange({ ...experience, translations: rest });
  };
  const rows: { id: string; label: string; original: string; value: string | undefined; set: (v: string) => void; long?: boolean }[] = [
    ...NOTICE_FIELDS.map(([field, label]) => ({
      id: `notice.${field}`,
      label: `Notice: ${label}`,
      original: form.notice[field],
      value: translation.notice?.[field],
      long: field === 'description',
      set: (v: string) => setTranslation({ ...translation, notice: { ...translation.notice, [field]: clean(v) } }),
    })),
    ...form.categories
      .filter((c) => c.saved)
      .map((c) => ({
        id: `categories.${c.ref}`,
        label: `Category: ${c.name}`,
        original: c.name,
        value: translation.categories?.[c.ref]?.name,
        set: (v: string) => setTranslation({ ...translation, categories: { ...translation.categories, [c.ref]: { name: clean(v) } } }),
      })),
    ...form.purposes
      .filter((p) => p.saved)
      .flatMap((p) => [
        {
          id: `purposes.${p.key}.name`,
          label: `${p.name}: name`,
          original: p.name,
          value: translation.purposes?.[p.key]?.name,
          set: (v: string) => setTranslation({ ...translation, purposes: { ...translation.purposes, [p.key]: { ...translation.purposes?.[p.key], name: clean(v) } } }),
        },
        {
          id: `purposes.${p.key}.description`,
          label: `${p.name}: description`,
          original: p.description,
          value: translation.purposes?.[p.key]?.description,
          long: true,
          set: (v: string) => setTranslation({ ...translation, purposes: { ...translation.purposes, [p.key]: { ...translation.purposes?.[p.key], description: clean(v) } } }),
        },
      ]),
  ];
  return (
    <>
      <h2 id="translations-title">Translations</h2>
      <div className="row">
        {locales.length > 0 && (
          <label>
            Language
            <select value={locale} onChange={(e) => setCurrent(e.target.value)}>
              {locales.map((l) => (
                <option key={l} value={l}>
                  {l}
                </option>
              ))}
            </select>
          </label>
        )}
        {!readOnly && (
          <>
            <label>
              Add a language
              <input value={adding} onChange={(e) => setAdding(e.target.value)} placeholder="de, fr-CA…" size={10} />
            </label>
            <button type="button" onClick={add} disabled={!adding.trim()}>
              Add
            </button>
            {locale && (
              <button type="button" className="danger" onClick={remove}>
                Remove {locale}
              </button>
            )}
          </>
        )}
      </div>
      {!locale ? (
        <p className="state empty">No translations: visitors see the default language ({experience.defaultLocale}). Untranslated texts fall back to it.</p>
      ) : (
        <TableBox layout="scroll" label="Translations side by side">
          <table className="side-by-side" aria-labelledby="translations-title">
            <thead>
              <tr>
                <th scope="col">Text</th>
                <th scope="col">{experience.defaultLocale} (default)</th>
                <th scope="col">{locale}</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((row) => (
                <tr key={row.id}>
                  <th scope="row">{row.label}</th>
                  <td className="original" lang={experience.defaultLocale}>
                    {row.original || <em>(empty)</em>}
                  </td>
                  <td>
                    {row.long ? (
                      <textarea lang={locale} aria-label={`${row.label} in ${locale}`} value={row.value ?? ''} onChange={(e) => row.set(e.target.value)} rows={2} />
                    ) : (
                      <input lang={locale} aria-label={`${row.label} in ${locale}`} value={row.value ?? ''} onChange={(e) => row.set(e.target.value)} />
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableBox>
      )}
    </>
  );
}

/**
 * The vendors' consent APIs (docs/integrations.md): which ones the site has, and for each signal the purposes it
 * needs (granted when every ticked purpose is; none ticked: denied). Then the shared cookie domain.
 */
function Integrations({
  experience,
  savedKeys,
  onChange,
}: {
  experience: Experience;
  savedKeys: { key: string; name: string }[];
  onChange: (e: Experience) => void;
}) {
  const list = (experience.integrations as Integration[] | undefined) ?? [];
  const setList = (next: Integration[]) => {
    const { integrations: _old, ...rest } = experience;
    onChange(next.length ? { ...rest, integrations: next } : (rest as Experience));
  };
  const cookieDomain = (experience.cookieDomain as string | undefined) ?? '';
  return (
    <>
      <h2 id="integrations-title">Other vendors' consent APIs</h2>
      <p className="hint">
        The SDK sends each vendor its denied default before a decision and an update after it. The snippet then loads stub.js with
        data-integrations naming them, before the vendors' tags. A signal is granted when every purpose ticked for it is granted.
      </p>
      {INTEGRATION_TYPES.map((type) => {
        const current = list.find((i) => i.type === type);
        const signals = INTEGRATION_SIGNALS[type] as readonly string[];
        return (
          <fieldset key={type} className="plain">
            <label className="check">
              <input
                type="checkbox"
                checked={!!current}
                onChange={(e) =>
                  setList(e.target.checked ? [...list, { type, signals: Object.fromEntries(signals.map((s) => [s, []])) }] : list.filter((i) => i.type !== type))
                }
              />
              {INTEGRATION_NAMES[type]}
            </label>
            {current && savedKeys.length > 0 && (
              <TableBox layout="scroll" label={`${INTEGRATION_NAMES[type]} signals and purposes`}>
                <table aria-label={`${INTEGRATION_NAMES[type]} signals and purposes`}>
                  <thead>
                    <tr>
                      <th scope="col">Signal</th>
                      {savedKeys.map((p) => (
                        <th key={p.key} scope="col">
                          {p.name || p.key}
                        </th>
                      ))}
                    </tr>
                  </thead>
                  <tbody>
                    {signals.map((signal) => {
                      const mapped = current.signals[signal] ?? [];
                      const always = ALWAYS_GRANTED_SIGNALS.includes(signal);
                      return (
                        <tr key={signal}>
                          <th scope="row">
                            <code>{signal}</code>
                            {always && ' (always allowed)'}
                          </th>
                          {savedKeys.map((p) => (
                            <td key={p.key}>
                              <input
                                type="checkbox"
                                aria-label={`${INTEGRATION_NAMES[type]} ${signal} needs ${p.name || p.key}`}
                                checked={mapped.includes(p.key)}
                                disabled={always}
                                onChange={(e) =>
                                  setList(
                                    list.map((i) =>
                                      i.type === type
                                        ? { ...i, signals: { ...i.signals, [signal]: e.target.checked ? [...mapped, p.key] : mapped.filter((k) => k !== p.key) } }
                                        : i,
                                    ),
                                  )
                                }
                              />
                            </td>
                          ))}
                        </tr>
                      );
                    })}
                  </tbody>
                </table>
              </TableBox>
            )}
          </fieldset>
        );
      })}
      <h2>One decision across your subdomains</h2>
      <label>
        Shared cookie domain (optional)
        <input
          value={cookieDomain}
          placeholder="example.com"
          onChange={(e) => {
            const { cookieDomain: _old, ...rest } = experience;
            onChange(e.target.value ? { ...rest, cookieDomain: e.target.value.trim().toLowerCase() } : (rest as Experience));
          }}
        />
      </label>
      <p className="hint">
        The host, or a parent, of every allowed origin of that site (never a public suffix such as co.uk): visitors then share one decision
        across www. and shop. Links to your other domains carry it with client.decorate(url).
      </p>
    </>
  );
}

/** IAB TCF has its own screen (screens/tcf.tsx): vendors, restrictions and the purpose map need the room. */
function TcfLink({ projectId, experience }: { projectId: string; experience: Experience }) {
  const { organization } = useProjectContext();
  const tcf = experience.tcf as { enabled?: boolean; vendors?: number[] } | undefined;
  return (
    <>
      <h2>IAB TCF</h2>
      <p className="hint">
        {tcf?.enabled ? `On, with ${tcf.vendors?.length ?? 0} vendor${tcf.vendors?.length === 1 ? '' : 's'}.` : 'Off.'} The IAB TCF v2.4 banner and
        Google’s Additional Consent are set on their own screen (saved into this experience).{' '}
        {organization && <Link href={paths.projectScreen(organization.id, projectId, 'consent/tcf')}>Open the IAB TCF settings</Link>}
      </p>
    </>
  );
}
