// GraphQL types, queries and mutations of the webhooks domain.
