// GraphQL types, queries and mutations of the sdk domain.
