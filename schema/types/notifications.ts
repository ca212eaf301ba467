// GraphQL types, queries and mutations of the notifications domain.
