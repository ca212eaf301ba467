// GraphQL types, queries and mutations of the consent domain.
