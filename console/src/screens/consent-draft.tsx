// The draft part of the consent editor: categories, purposes and the notice, as native form controls.
import { useId } from 'react';
import type { CategoryRow, DraftForm, Notice, PurposeRow } from '../lib/consent-model';
import { BUILT_IN_UI_STRINGS } from '../../../src/consent/ui-strings';

/** What the SDK shows on a button whose label is left empty (English here; visitors get their language). */
const DEFAULT_LABELS = BUILT_IN_UI_STRINGS.en!;

let counter = 0;
const newRef = () => `new-${++counter}`;

export function DraftEditor({ form, onChange, readOnly }: { form: DraftForm; onChange: (form: DraftForm) => void; readOnly: boolean }) {
  const setCategory = (ref: string, patch: Partial<CategoryRow>) => onChange({ ...form, categories: form.categories.map((c) => (c.ref === ref ? { ...c, ...patch } : c)) });
  const setPurpose = (ref: string, patch: Partial<PurposeRow>) => onChange({ ...form, purposes: form.purposes.map((p) => (p.ref === ref ? { ...p, ...patch } : p)) });
  const setNotice = (patch: Partial<Notice>) => onChange({ ...form, notice: { ...form.notice, ...patch } });
  const move = <T,>(list: T[], index: number, by: number): T[] => {
    const next = [...list];
    const [item] = next.splice(index, 1);
    next.splice(index + by, 0, item!);
    return next;
  };
  const addCategory = () => onChange({ ...form, categories: [...form.categories, { ref: newRef(), saved: false, name: '' }] });
  const addPurpose = () =>
    onChange({
      ...form,
      purposes: [...form.purposes, { ref: newRef(), saved: false, key: '', name: '', description: '', required: false, category: form.categories[0]?.ref ?? '' }],
    });
  const inUse = (ref: string) => form.purposes.some((p) => p.category === ref);

  return (
    <fieldset disabled={readOnly} className="plain">
      <legend className="visually-hidden">Draft</legend>
      <h2 id="categories-title">Categories</h2>
      <p className="hint">Purposes are grouped under categories in the preferences dialog.</p>
      {form.categories.length === 0 && <p className="state empty">No categories yet. Add one, then add purposes to it.</p>}
      <ul className="rows" aria-labelledby="categories-title">
        {form.categories.map((category, i) => (
          <li key={category.ref} className="row" data-category={category.name}>
            <label className="grow">
              Category name
              <input value={category.name} onChange={(e) => setCategory(category.ref, { name: e.target.value })} required maxLength={100} />
            </label>
            {!readOnly && (
              <div className="row-actions">
                <button type="button" onClick={() => onChange({ ...form, categories: move(form.categories, i, -1) })} disabled={i === 0} aria-label={`Move ${category.name || 'category'} up`}>
                  ↑
                </button>
                <button type="button" onClick={() => onChange({ ...form, categories: move(form.categories, i, 1) })} disabled={i === form.categories.length - 1} aria-label={`Move ${category.name || 'category'} down`}>
                  ↓
                </button>
                <button
                  type="button"
                  className="danger"
                  onClick={() => onChange({ ...form, categories: form.categories.filter((c) => c.ref !== category.ref) })}
                  disabled={inUse(category.ref)}
                  title={inUse(category.ref) ? 'Move or remove its purposes first' : undefined}
                  aria-label={`Remove category ${category.name}`}
                >
                  Remove
                </button>
              </div>
            )}
          </li>
        ))}
      </ul>
      {!readOnly && (
        <button type="button" onClick={addCategory}>
          Add category
        </button>
      )}

      <h2 id="purposes-title">Purposes</h2>
      <p className="hint">What visitors agree to. A required purpose is always on; the key is what your site checks with hasConsent().</p>
      {form.purposes.length === 0 && <p className="state empty">No purposes yet. Publishing needs at least one.</p>}
      <ul className="rows purposes" aria-labelledby="purposes-title">
        {form.purposes.map((purpose, i) => (
          <PurposeEditor
            key={purpose.ref}
            purpose={purpose}
            categories={form.categories}
            readOnly={readOnly}
            onChange={(patch) => setPurpose(purpose.ref, patch)}
            onRemove={() => onChange({ ...form, purposes: form.purposes.filter((p) => p.ref !== purpose.ref) })}
            onMove={(by) => onChange({ ...form, purposes: move(form.purposes, i, by) })}
            first={i === 0}
            last={i === form.purposes.length - 1}
          />
        ))}
      </ul>
      {!readOnly && (
        <button type="button" onClick={addPurpose} disabled={form.categories.length === 0} title={form.categories.length === 0 ? 'Add a category first' : undefined}>
          Add purpose
        </button>
      )}

      <h2>Notice</h2>
      <div className="grid-2">
        <label>
          Title
          <input name="notice-title" value={form.notice.title} onChange={(e) => setNotice({ title: e.target.value })} maxLength={200} placeholder="e.g. We value your privacy" />
        </label>
        <label>
          Company name
          <input value={form.notice.companyName} onChange={(e) => setNotice({ companyName: e.target.value })} maxLength={200} />
        </label>
        <label className="span-2">
          Text
          <textarea name="notice-description" value={form.notice.description} onChange={(e) => setNotice({ description: e.target.value })} maxLength={5000} rows={4} placeholder="e.g. We use cookies to run the site and, with your consent, to measure visits." />
        </label>
        <label>
          Accept button
          <input value={form.notice.acceptLabel} onChange={(e) => setNotice({ acceptLabel: e.target.value })} maxLength={60} placeholder={DEFAULT_LABELS.acceptAll} aria-describedby="label-defaults" />
        </label>
        <label>
          Reject button
          <input value={form.notice.rejectLabel} onChange={(e) => setNotice({ rejectLabel: e.target.value })} maxLength={60} placeholder={DEFAULT_LABELS.rejectAll} aria-describedby="label-defaults" />
        </label>
        <label>
          Manage button
          <input value={form.notice.manageLabel} onChange={(e) => setNotice({ manageLabel: e.target.value })} maxLength={60} placeholder={DEFAULT_LABELS.manage} aria-describedby="label-defaults" />
        </label>
        <p id="label-defaults" className="hint span-2">
          Left empty, a button says the built-in words shown in grey (“{DEFAULT_LABELS.acceptAll}”, “{DEFAULT_LABELS.rejectAll}”, “{DEFAULT_LABELS.manage}”), in the
          visitor’s language; words you type here are shown as they are.
        </p>
        <label>
          Logo (https URL)
          <input type="url" value={form.notice.logoUrl} onChange={(e) => setNotice({ logoUrl: e.target.value })} placeholder="https://…" />
        </label>
        <div className="color-field">
          <label>
            Colour (#rrggbb)
            <input value={form.notice.primaryColor} onChange={(e) => setNotice({ primaryColor: e.target.value })} pattern="^(#[0-9a-fA-F]{6})?$" placeholder="#1f4e79" />
          </label>
          <label>
            <span className="visually-hidden">Pick the colour</span>
            <input type="color" value={/^#[0-9a-fA-F]{6}$/.test(form.notice.primaryColor) ? form.notice.primaryColor : '#1f4e79'} onChange={(e) => setNotice({ primaryColor: e.target.value })} />
          </label>
        </div>
      </div>
    </fieldset>
  );
}

function PurposeEditor({
  purpose,
  categories,
  readOnly,
  onChange,
  onRemove,
  onMove,
  first,
  last,
}: {
  purpose: PurposeRow;
  categories: CategoryRow[];
  readOnly: boolean;
  onChange: (patch: Partial<PurposeRow>) => void;
  onRemove: () => void;
  onMove: (by: number) => void;
  first: boolean;
  last: boolean;
}) {
  const id = useId();
  const label = purpose.name || purpose.key || 'purpose';
  return (
    <li className="card purpose" data-purpose={purpose.key}>
      <div className="grid-2">
        <label>
          Name
          <input name="purpose-name" value={purpose.name} onChange={(e) => onChange({ name: e.target.value })} required maxLength={200} />
        </label>
        <label>
          Key
          <input
            name="purpose-key"
            value={purpose.key}
            onChange={(e) => onChange({ key: e.target.value })}
            required
            pattern="[a-z][a-z0-9_]{0,63}"
            aria-describedby={`${id}-key`}
            className="mono"
          />
          <small id={`${id}-key`}>Lowercase letters, digits and _; starts with a letter.</small>
        </label>
        <label className="span-2">
          Description
          <textarea name="purpose-description" value={purpose.description} onChange={(e) => onChange({ description: e.target.value })} maxLength={2000} rows={2} />
        </label>
        <label>
          Category
          <select name="purpose-category" value={purpose.category} onChange={(e) => onChange({ category: e.target.value })} required>
            {categories.map((c) => (
              <option key={c.ref} value={c.ref}>
                {c.name || '(unnamed)'}
              </option>
            ))}
          </select>
        </label>
        <label className="check">
          <input type="checkbox" name="purpose-required" checked={purpose.required} onChange={(e) => onChange({ required: e.target.checked })} />
          Required (always on)
        </label>
      </div>
      {!readOnly && (
        <div className="row-actions">
          <button type="button" onClick={() => onMove(-1)} disabled={first} aria-label={`Move ${label} up`}>
            ↑
          </button>
          <button type="button" onClick={() => onMove(1)} disabled={last} aria-label={`Move ${label} down`}>
            ↓
          </button>
          <button type="button" className="danger" onClick={onRemove} aria-label={`Remove purpose ${label}`}>
            Remove
          </button>
        </div>
      )}
    </li>
  );
}
