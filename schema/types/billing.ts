// GraphQL types, queries and mutations of the billing domain.
