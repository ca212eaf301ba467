// A table that stays readable at 390 px (issue 28): on a phone, a list table becomes one card per row, each cell
// under its column's name (read from the header row after each render, so screens keep writing plain tables);
// a data table that must stay a grid (the analytics numbers, side-by-side translations) scrolls sideways in a
// focusable box that says so when it does not fit, instead of hiding its last columns without a sign.
import { useLayoutEffect, useRef, useState, type ReactNode } from 'react';

export function TableBox({ children, layout = 'cards', label }: { children: ReactNode; layout?: 'cards' | 'scroll'; label?: string }) {
  const box = useRef<HTMLDivElement>(null);
  const [hidden, setHidden] = useState(0);

  // After every render (new rows included): label each cell with its column's header.
  useLayoutEffect(() => {
    const table = box.current?.querySelector('table');
    if (!table || layout !== 'cards') return;
    const names: string[] = [];
    for (const th of table.querySelectorAll('thead tr:first-child > th')) {
      const span = (th as HTMLTableCellElement).colSpan || 1;
      for (let i = 0; i < span; i++) names.push((th.textContent ?? '').trim());
    }
    for (const row of table.querySelectorAll('tbody tr, tfoot tr')) {
      let column = 0;
      for (const cell of (row as HTMLTableRowElement).cells) {
        const name = names[column] ?? '';
        if (cell.dataset.label !== name) cell.dataset.label = name;
        column += cell.colSpan || 1;
      }
    }
  });

  // A scrolling table says how many columns are out of sight.
  useLayoutEffect(() => {
    const element = box.current;
    if (!element || layout !== 'scroll' || typeof ResizeObserver === 'undefined') return;
    const measure = () => {
      const right = element.getBoundingClientRect().right;
      const headers = [...element.querySelectorAll('thead tr:first-child > th')];
      const more = element.scrollWidth - element.clientWidth - element.scrollLeft > 1;
      setHidden(more ? Math.max(1, headers.filter((th) => th.getBoundingClientRect().left >= right - 4).length) : 0);
    };
    measure();
    const observer = new ResizeObserver(measure);
    observer.observe(element);
    element.addEventListener('scroll', measure, { passive: true });
    return () => (observer.disconnect(), element.removeEventListener('scroll', measure));
  }, [layout]);

  if (layout === 'cards') {
    return (
      <div ref={box} className="table-scroll table-cards">
        {children}
      </div>
    );
  }
  return (
    <>
      {hidden > 0 && (
        <p className="scroll-hint" aria-hidden="true">
          Scroll sideways: {hidden} more column{hidden > 1 ? 's' : ''} →
        </p>
      )}
      {/* Focusable, so a keyboard scrolls it too. */}
      <div ref={box} className="table-scroll scrolls" tabIndex={0} role="region" aria-label={label ?? 'Table, scrolls sideways'}>
        {children}
      </div>
    </>
  );
}
