// Sign up, sign in (console-core). Signing in is the REST login with ?session=cookie: the token lands in an
// HttpOnly cookie no script can read; sign-up is the `register` mutation followed by that login.
import { useState, type FormEvent } from 'react';
import { useMutation } from 'urql';
import { Link, useSearch } from 'wouter';
import { ErrorState } from '../components/states';
import { RegisterDocument } from '../graphql/generated';
import { signIn } from '../lib/rest';
import { paths } from '../lib/screen';

/** Where to go after signing in: the `next` the gate sent us with, if it is a console address. */
function nextAddress(search: string): string {
  const next = new URLSearchParams(search).get('next');
  return next && next.startsWith('/') && !next.startsWith('//') ? `/console${next}` : '/console/';
}

function AuthPage({ title, children }: { title: string; children: React.ReactNode }) {
  return (
    <main id="main" className="auth">
      <p className="brand">Consent console</p>
      <section className="card" aria-labelledby="auth-title">
        <h1 id="auth-title">{title}</h1>
        {children}
      </section>
    </main>
  );
}

export function SignIn() {
  const search = useSearch();
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    setBusy(true);
    setError(null);
    try {
      await signIn(String(form.get('email')), String(form.get('password')));
      // A full load: the shell and cache start clean for this user.
      window.location.assign(nextAddress(search));
    } catch (e) {
      setError(e);
      setBusy(false);
    }
  };
  return (
    <AuthPage title="Sign in">
      <form onSubmit={submit} className="stack">
        <label>
          E-mail
          <input name="email" type="email" autoComplete="username" required autoFocus />
        </label>
        <label>
          Password
          <input name="password" type="password" autoComplete="current-password" required />
        </label>
        {error ? <ErrorState title="Signing in failed" error={error} /> : null}
        <button type="submit" className="primary" disabled={busy}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
      <p>
        New here? <Link href={paths.signUp}>Create an account</Link>
      </p>
    </AuthPage>
  );
}

export function SignUp() {
  const [registration, register] = useMutation(RegisterDocument);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const input = { name: String(form.get('name')), email: String(form.get('email')), password: String(form.get('password')) };
    setBusy(true);
    setError(null);
    const result = await register({ input });
    if (result.error) {
      setBusy(false);
      return;
    }
    try {
      await signIn(input.email, input.password);
      window.location.assign('/console/orgs/new');
    } catch (e) {
      setError(e);
      setBusy(false);
    }
  };
  return (
    <AuthPage title="Create your account">
      <form onSubmit={submit} className="stack">
        <label>
          Name
          <input name="name" autoComplete="name" required />
        </label>
        <label>
          E-mail
          <input name="email" type="email" autoComplete="email" required />
        </label>
        <label>
          Password
          <input name="password" type="password" autoComplete="new-password" minLength={12} required aria-describedby="password-hint" />
          <small id="password-hint">At least 12 characters.</small>
        </label>
        {registration.error ? <ErrorState title="Creating the account failed" error={registration.error} /> : null}
        {error ? <ErrorState title="Signing in failed" error={error} /> : null}
        <button type="submit" className="primary" disabled={busy}>
          {busy ? 'Creating…' : 'Create account'}
        </button>
      </form>
      <p>
        Already have an account? <Link href={paths.signIn}>Sign in</Link>
      </p>
    </AuthPage>
  );
}
