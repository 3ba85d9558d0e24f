import NIOCore
import NIOPosix

/// Listens on 127.0.0.1:`port` and forwards each connection to 127.0.0.1:`target`: an SMTP relay that comes back on
/// the port the server was configured with.
struct TCPForwarder: Sendable {
    private let listener: any Channel

    private static func start(port: Int, to target: Int) async throws -> TCPForwarder {
        let listener = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { inbound in
                // The accepted connection is registered (and read) only once this future completes: the relay
                // speaks first, so nothing is lost meanwhile.
                ClientBootstrap(group: inbound.eventLoop).connect(host: "127.0.0.1", port: target).flatMapThrowing { outbound in
                    try outbound.pipeline.syncOperations.addHandler(Relay(partner: inbound))
                    try inbound.pipeline.syncOperations.addHandler(Relay(partner: outbound))
                }
            }
            .bind(host: "127.0.0.1", port: port).get()
        return TCPForwarder(listener: listener)
    }

    /// Runs `body` while forwarding; stops listening after it, whether it threw or not.
    static func forwarding<T: Sendable>(port: Int, to target: Int, _ body: () async throws -> T) async throws -> T {
        let forwarder = try await Self.start(port: port, to: target)
        do {
            let value = try await body()
            try await forwarder.listener.close()
            return value
        } catch {
            try? await forwarder.listener.close()
            throw error
        }
    }

    /// Writes what one side reads to the other, and closes the other when one side closes.
    private final class Relay: ChannelInboundHandler {
        typealias InboundIn = ByteBuffer
        let partner: any Channel

        init(partner: any Channel) { self.partner = partner }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            self.partner.writeAndFlush(self.unwrapInboundIn(data), promise: nil)
        }

        func channelInactive(context: ChannelHandlerContext) {
            self.partner.close(promise: nil)
            context.fireChannelInactive()
        }
    }
}
