import { PageHeading } from '../components/page-heading.js';
import { DEFAULT_ROUTE } from '../routing/routes.js';
import { RouteLink } from '../routing/use-route.js';

export function NotFoundPage({ message }: { message: string }) {
  return (
    <>
      <PageHeading title="Not found">Not found</PageHeading>
      <p>{message}</p>
      <p>
        <RouteLink to={DEFAULT_ROUTE}>Go to reporting</RouteLink>
      </p>
    </>
  );
}
