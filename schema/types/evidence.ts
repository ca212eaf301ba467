// GraphQL types, queries and mutations of the evidence domain.
