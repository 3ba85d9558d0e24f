import Hummingbird

/// Adds routes together with their operations, so what is served and what is documented are one list: the document
/// at `/openapi.json` is built from ``operations``, and every route added here is in it.
///
/// Used while the router is built, from one task.
package final class APIRoutes<Context: RequestContext> {
    private let router: Router<Context>
    /// The operations added, in order, each with what its requirements add to it.
    package private(set) var operations: [APIOperation] = []

    package init(router: Router<Context>) { self.router = router }

    /// Serves `operation` with `handler`, behind the middleware of `requirements` (in order), and documents it.
    package func add<Output: ResponseGenerator>(
        _ operation: APIOperation, requirements: [RouteRequirement<Context>] = [],
        handler: @escaping @Sendable (Request, Context) async throws -> Output
    ) {
        var documented = operation
        let group = self.router.group()
        for requirement in requirements {
            for middleware in requirement.middleware { group.add(middleware: middleware) }
            requirement.document(&documented)
        }
        group.on(RouterPath(documented.routerPath), method: documented.method, use: handler)
        self.operations.append(documented)
    }
}
