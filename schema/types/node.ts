// Relay's global object identification: the Node interface and `node(id)` / `nodes(ids)` (docs/graphql.md,
// "Refetching any object"). Ids are the plain ids REST shows (unique across types); each object is authorised
// as its type's own field authorises it (src/graph/nodes.ts). Types implement it with `interfaces: [Node]`.
import { loadNodes, MAX_NODES, nodeTypeOf } from '../../src/graph/nodes.js';
import { builder } from '../builder.js';

export const Node = builder.interfaceRef<{ id: string }>('Node').implement({
  description: 'An object with an id that node(id) finds again: the same id REST shows',
  fields: (t) => ({ id: t.exposeID('id') }),
  resolveType: (node) => nodeTypeOf(node),
});

builder.queryFields((t) => ({
  node: t.field({
    type: Node,
    nullable: true,
    description:
      "The object with this id, authorised as its type's own field: null with not_found when there is none or the viewer may not see it, " +
      'forbidden for a member below the role that field needs',
    args: { id: t.arg.id({ required: true }) },
    authScopes: { loggedIn: true },
    resolve: async (_root, args, ctx) => {
      const [node] = await loadNodes(ctx, [String(args.id)]);
      if (node instanceof Error) throw node;
      return node!;
    },
  }),
  nodes: t.field({
    type: [Node],
    nullable: { list: false, items: true },
    description: `The objects with these ids (at most ${MAX_NODES}), in order; each one the viewer may not see is null with its own error, as node(id)`,
    args: { ids: t.arg.idList({ required: true }) },
    authScopes: { loggedIn: true },
    // An item that is an error becomes null with that error at its index (graphql-js completes each item alone).
    resolve: (_root, args, ctx) => loadNodes(ctx, args.ids.map(String)) as Promise<{ id: string }[]>,
  }),
}));
