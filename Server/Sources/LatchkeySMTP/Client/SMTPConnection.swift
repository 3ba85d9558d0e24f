import NIOCore
import NIOPosix

/// The channel of one delivery: the pipeline and how a timeout ends it.
///
/// Pipeline, from the socket inwards: [TLS (implicit TLS; inserted after STARTTLS by the decoder)] →
/// `MessageToByteHandler(SMTPCommandEncoder)` → `ByteToMessageHandler(SMTPReplyDecoder)` → `NIOAsyncChannel`.
/// Commands go out through the decoder (which watches for STARTTLS) and the encoder; replies come in as whole
/// ``SMTPReply`` values.
enum SMTPConnection {
    typealias Channel = NIOAsyncChannel<SMTPReply, SMTPCommand>

    static func open(
        configuration: SMTPConfiguration,
        tls: SMTPTLSUpgrade?,
        group: any EventLoopGroup,
        deadline: NIODeadline
    ) async throws -> Channel {
        let connectTimeout = min(TimeAmount(configuration.commandTimeout), deadline - .now())
        let implicitTLS = configuration.tls == .implicit ? tls : nil
        let startTLS = configuration.tls == .startTLS ? tls : nil
        do {
            return try await ClientBootstrap(group: group)
                .connectTimeout(connectTimeout)
                .connect(host: configuration.host, port: configuration.port) { channel in
                    channel.eventLoop.makeCompletedFuture {
                        let pipeline = channel.pipeline.syncOperations
                        if let implicitTLS { try pipeline.addHandler(try implicitTLS.makeHandler()) }
                        try pipeline.addHandler(MessageToByteHandler(SMTPCommandEncoder()))
                        try pipeline.addHandler(ByteToMessageHandler(SMTPReplyDecoder(startTLS: startTLS)))
                        return try Channel(wrappingChannelSynchronously: channel)
                    }
                }
        } catch let error as CancellationError {
            throw error
        } catch {
            throw SMTPError.from(error, stage: .connecting)
        }
    }

    /// Ends the conversation with `error`: the reader of the replies gets it, and closing the channel wakes a writer.
    /// Call it on the channel's event loop (a scheduled task's body is).
    static func fail(_ channel: any NIOCore.Channel, _ error: SMTPError) {
        channel.pipeline.fireErrorCaught(error)
        channel.close(promise: nil)
    }
}
