// GraphQL types, queries and mutations of the receipts domain.
