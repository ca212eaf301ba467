// Organization billing (console-screens): the plan in force, the subscription (trial, period, cancellation),
// entitlements and usage for everyone; trial, checkout and cancel for Owners only (the API refuses others).
import { useState } from 'react';
import { useMutation, useQuery } from 'urql';
import { ErrorState, QueryState } from '../components/states';
import {
  BillingDocument,
  CancelSubscriptionDocument,
  StartCheckoutDocument,
  StartTrialDocument,
  type BillingPlanFieldsFragment,
  type OrganizationBillingStateFragment,
} from '../graphql/generated';
import { useCan } from '../lib/context';
import type { ScreenProps } from '../lib/screen';
import { ConfirmDialog } from './parts/confirm';
import { formatCount, formatDateTime, formatPrice } from './parts/format';
import './parts/screens.css';

type Plan = BillingPlanFieldsFragment;
type State = OrganizationBillingStateFragment;

export default function Billing({ params }: ScreenProps) {
  const orgId = params.orgId;
  const isOwner = useCan('OWNER');
  const [result, refetch] = useQuery({ query: BillingDocument, variables: { organizationId: orgId }, requestPolicy: 'cache-and-network' });
  return (
    <section aria-labelledby="screen-title" className="screen">
      <h1 id="screen-title">Billing</h1>
      <QueryState result={result} retry={() => refetch({ requestPolicy: 'network-only' })}>
        {(data) => {
          const billing = data.organization.billing!;
          return (
            <>
              <CurrentPlan billing={billing} orgId={orgId} isOwner={isOwner} />
              <h2>Plans</h2>
              {!isOwner && <p className="note">Only Owners start trials, subscribe or cancel.</p>}
              <ul className="cards plans">
                {data.billingPlans.map((plan) => (
                  <PlanCard key={plan.id} plan={plan} billing={billing} orgId={orgId} isOwner={isOwner} />
                ))}
              </ul>
            </>
          );
        }}
      </QueryState>
    </section>
  );
}

const plural = (n: number, word: string) => `${formatCount(n)} ${word}${n === 1 ? '' : 's'}`;

function subscriptionText(billing: State): string {
  const s = billing.subscription;
  if (!s) return 'No subscription: the organization is on the free plan.';
  switch (s.status) {
    case 'trialing':
      return `Trial of ${billing.plan.name} until ${formatDateTime(s.trialEndsAt)}${s.cancelAtPeriodEnd ? ', then back to Free' : ''}.`;
    case 'active':
      return s.cancelAtPeriodEnd
        ? `Canceled: ${billing.plan.name} stays until ${formatDateTime(s.currentPeriodEnd)}, then Free.`
        : `Active, billed every ${s.interval ?? 'period'}; renews ${formatDateTime(s.currentPeriodEnd)}.`;
    case 'past_due':
      return `Payment past due since ${formatDateTime(s.currentPeriodEnd)}: update the payment method with the provider.`;
    case 'canceled':
      return 'Canceled: the organization is on the free plan.';
    default:
      return s.status;
  }
}

function CurrentPlan({ billing, orgId, isOwner }: { billing: State; orgId: string; isOwner: boolean }) {
  const [open, setOpen] = useState(false);
  const [state, cancel] = useMutation(CancelSubscriptionDocument);
  const s = billing.subscription;
  const cancellable = !!s && ['trialing', 'active', 'past_due'].includes(s.status) && !s.cancelAtPeriodEnd;
  const confirm = async () => {
    const done = await cancel({ organizationId: orgId });
    if (!done.error) setOpen(false);
  };
  return (
    <div className="card current-plan" aria-labelledby="current-plan-title">
      <h2 id="current-plan-title">
        Current plan: {billing.plan.name}{' '}
        {s && <span className={`badge ${s.status === 'past_due' ? 'warn' : s.status === 'active' || s.status === 'trialing' ? 'ok' : ''}`}>{s.status.replace('_', ' ')}</span>}
      </h2>
      <p>{subscriptionText(billing)}</p>
      <dl className="facts">
        <dt>Projects</dt>
        <dd>
          {formatCount(billing.usage.projects)} of {formatCount(billing.entitlements.projects)} used
        </dd>
        <dt>Connectors</dt>
        <dd>{formatCount(billing.entitlements.connectors)}</dd>
        <dt>Cases</dt>
        <dd>{formatCount(billing.entitlements.cases)}</dd>
      </dl>
      {isOwner && cancellable && (
        <button type="button" className="danger" onClick={() => setOpen(true)}>
          Cancel subscription
        </button>
      )}
      <ConfirmDialog open={open} title="Cancel the subscription?" confirmLabel="Cancel subscription" busy={state.fetching} onConfirm={confirm} onCancel={() => setOpen(false)}>
        <p>
          {billing.plan.name} stays until the end of the {s?.status === 'trialing' ? 'trial' : 'period'}; then the organization falls back to Free. Existing
          projects stay, but creating more than Free allows is refused.
        </p>
        <ErrorState title="The subscription could not be canceled" error={state.error} />
      </ConfirmDialog>
    </div>
  );
}

function PlanCard({ plan, billing, orgId, isOwner }: { plan: Plan; billing: State; orgId: string; isOwner: boolean }) {
  const [trialState, startTrial] = useMutation(StartTrialDocument);
  const [checkoutState, startCheckout] = useMutation(StartCheckoutDocument);
  const current = billing.plan.id === plan.id;
  const s = billing.subscription;
  const paid = plan.prices.month > 0;
  const subscribedHere = current && s?.status === 'active' && !s.cancelAtPeriodEnd;
  const checkout = async (interval: 'month' | 'year') => {
    const done = await startCheckout({ organizationId: orgId, planId: plan.id, interval });
    // The provider's page completes the purchase; the subscription changes when its event arrives.
    if (done.data) window.location.assign(done.data.startCheckout.checkoutUrl);
  };
  return (
    <li className={`card plan${current ? ' current' : ''}`} aria-labelledby={`plan-${plan.id}`}>
      <h3 id={`plan-${plan.id}`}>
        {plan.name} {current && <span className="badge ok">Current</span>}
      </h3>
      <p className="price">
        {formatPrice(plan.prices.month)} / month {paid && <small>or {formatPrice(plan.prices.year)} / year</small>}
      </p>
      <ul className="plain">
        <li>{plural(plan.entitlements.projects, 'project')}</li>
        <li>{plural(plan.entitlements.connectors, 'connector')}</li>
        <li>{plural(plan.entitlements.cases, 'case')}</li>
        {plan.trialDays > 0 && <li>{plan.trialDays}-day free trial</li>}
      </ul>
      {isOwner && ((plan.trialDays > 0 && !s) || (paid && !subscribedHere)) && (
        <div className="row">
          {plan.trialDays > 0 && !s && (
            <button type="button" onClick={() => startTrial({ organizationId: orgId, planId: plan.id })} disabled={trialState.fetching}>
              Start {plan.trialDays}-day trial<span className="visually-hidden"> of {plan.name}</span>
            </button>
          )}
          {paid && !subscribedHere && (
            <>
              <button type="button" className="primary" onClick={() => checkout('month')} disabled={checkoutState.fetching}>
                Subscribe monthly<span className="visually-hidden"> to {plan.name}</span>
              </button>
              <button type="button" onClick={() => checkout('year')} disabled={checkoutState.fetching}>
                Subscribe yearly<span className="visually-hidden"> to {plan.name}</span>
              </button>
            </>
          )}
        </div>
      )}
      <ErrorState title="The trial could not start" error={trialState.error} />
      <ErrorState title="The checkout could not open" error={checkoutState.error} />
    </li>
  );
}
