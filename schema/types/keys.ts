// GraphQL types, queries and mutations of the keys domain.
