// Published versions of a project (console-screens): newest first, who published each, their hashes, and
// the publish evidence package of each as JSON, a printable HTML page or CSV (REST downloads: see
// parts/download.ts). Every role may read and download evidence.
import { useState } from 'react';
import { useQuery } from 'urql';
import { Link } from 'wouter';
import { Empty, ErrorState, Loading, QueryState } from '../components/states';
import { ProjectVersionsDocument, VersionEvidenceDocument, type ProjectVersionsQuery } from '../graphql/generated';
import { useCan } from '../lib/context';
import { paths, type ScreenProps } from '../lib/screen';
import { useDownload } from './parts/download';
import { formatCount, formatDateTime } from './parts/format';
import { PagerControls, usePager } from './parts/pager';
import './parts/screens.css';

type Version = NonNullable<ProjectVersionsQuery['project']['versions']>['edges'][number]['node'];
const FORMATS = [
  { format: 'json', label: 'JSON' },
  { format: 'html', label: 'HTML' },
  { format: 'csv', label: 'CSV' },
] as const;

export default function Versions({ params }: ScreenProps) {
  const projectId = params.projectId!;
  const canPublish = useCan('ADMIN');
  const pager = usePager();
  const [result, refetch] = useQuery({
    query: ProjectVersionsDocument,
    variables: { projectId, after: pager.cursor },
    requestPolicy: 'cache-and-network',
  });

  return (
    <section aria-labelledby="screen-title" className="screen">
      <h1 id="screen-title">Versions</h1>
      <p className="lead">
        Each publish makes an immutable, numbered version. Its evidence package records what visitors were shown, who published it, and hashes
        anyone can re-check.
      </p>
      <QueryState
        result={result}
        retry={() => refetch({ requestPolicy: 'network-only' })}
        isEmpty={(data) => !data.project.versions?.edges.length && pager.page === 1}
        empty={
          <Empty title="Nothing published yet.">
            <p>
              {canPublish ? (
                <>
                  Write the purposes and the notice on the <Link href={paths.projectScreen(params.orgId, projectId, 'consent')}>Consent</Link> screen, then publish.
                </>
              ) : (
                'An Admin or Owner publishes the consent configuration.'
              )}
            </p>
          </Empty>
        }
      >
        {(data) => {
          const publishers = new Map((data.project.evidence ?? []).map((e) => [e.versionId, e.publishedBy]));
          return (
            <>
              <ol className="versions">
                {data.project.versions?.edges.map(({ node }, i) => (
                  <VersionItem
                    key={node.id}
                    projectId={projectId}
                    version={node}
                    latest={pager.page === 1 && i === 0}
                    publisher={publishers.get(node.id)}
                  />
                ))}
              </ol>
              <PagerControls pager={pager} nextCursor={data.project.versions?.pageInfo.hasNextPage ? data.project.versions.pageInfo.endCursor : null} label="Versions" />
            </>
          );
        }}
      </QueryState>
    </section>
  );
}

function VersionItem({
  projectId,
  version,
  latest,
  publisher,
}: {
  projectId: string;
  version: Version;
  latest: boolean;
  publisher?: { name: string; email: string };
}) {
  const { busy, error, status, download: save } = useDownload();
  const [open, setOpen] = useState(false);
  const download = (format: string) =>
    save(
      format,
      `/api/platform/projects/${projectId}/evidence/publish/${version.id}?format=${format}&download=1`,
      `consent-evidence-v${version.number}.${format}`,
    );
  return (
    <li className="card version" aria-labelledby={`version-${version.id}`}>
      <div className="title-row">
        <h2 id={`version-${version.id}`}>Version {version.number}</h2>
        {latest && <span className="badge ok">Live</span>}
      </div>
      <p>
        Published {formatDateTime(version.publishedAt)}
        {publisher && (
          <>
            {' '}
            by {publisher.name || publisher.email} <span className="muted">({publisher.email})</span>
          </>
        )}
      </p>
      <dl className="facts hashes">
        <dt>Consent hash</dt>
        <dd>
          <code title="Changes when the purposes or the notice text change: visitors are asked again">{version.consentHash}</code>
        </dd>
        <dt>Content hash</dt>
        <dd>
          <code>{version.contentHash}</code>
        </dd>
      </dl>
      <div className="row" role="group" aria-label={`Evidence of version ${version.number}`}>
        <span>Evidence:</span>
        {FORMATS.map(({ format, label }) => (
          <button key={format} type="button" onClick={() => download(format)} disabled={!!busy}>
            {busy === format ? 'Preparing…' : label}
            <span className="visually-hidden"> evidence of version {version.number}</span>
          </button>
        ))}
        <span role="status">{status}</span>
      </div>
      <ErrorState title="The evidence could not be downloaded" error={error} />
      <details onToggle={(e) => setOpen((e.target as HTMLDetailsElement).open)}>
        <summary>
          Receipts and package hash<span className="visually-hidden"> of version {version.number}</span>
        </summary>
        {open && <EvidenceFacts projectId={projectId} versionId={version.id} />}
      </details>
    </li>
  );
}

function EvidenceFacts({ projectId, versionId }: { projectId: string; versionId: string }) {
  const [result] = useQuery({ query: VersionEvidenceDocument, variables: { projectId, versionId }, requestPolicy: 'cache-and-network' });
  if (result.error) return <ErrorState error={result.error} />;
  if (!result.data) return <Loading />;
  const evidence = result.data.publishEvidencePackage;
  return (
    <dl className="facts">
      <dt>Receipts recorded</dt>
      <dd>{formatCount(evidence.receiptsCount)}</dd>
      <dt>First receipt</dt>
      <dd>{evidence.firstReceiptAt ? formatDateTime(evidence.firstReceiptAt) : 'None yet'}</dd>
      <dt>Package hash</dt>
      <dd>
        <code>{evidence.hashes.packageHash}</code>
      </dd>
    </dl>
  );
}
