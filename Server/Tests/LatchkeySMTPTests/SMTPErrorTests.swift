import Testing

@testable import LatchkeySMTP

/// How failures are classified for an outbox: 4xx retry, 5xx give up, nonsense is a protocol violation.
struct SMTPErrorTests {
    @Test(arguments: [(421, "transient"), (451, "transient"), (454, "transient"), (535, "permanent"), (550, "permanent"), (554, "permanent")])
    func aRefusalsKindFollowsItsCode(code: Int, kind: String) {
        let error = SMTPError(.rejected, stage: .recipient, detail: "refused", reply: SMTPReply(code: code, lines: ["x"]))
        #expect("\(error.kind)" == kind)
        #expect(error.replyCode == code)
    }

    @Test func aSuccessCodeWhereAFailureWasDueIsAProtocolViolation() {
        let error = SMTPError(.unexpectedReply, stage: .data, detail: "unexpected", reply: SMTPReply(code: 250, lines: ["ok"]))
        #expect(error.kind == .protocolViolation)
    }

    @Test func failuresWithoutAReplyAreTransientExceptBrokenConfigurationAndProtocol() {
        for code in [SMTPError.Code.connectionFailed, .connectionClosed, .timedOut, .tlsFailed, .startTLSNotOffered, .authenticationNotOffered] {
            #expect(SMTPError(code, stage: .connecting, detail: "d").kind == .transient, "\(code)")
        }
        #expect(SMTPError(.invalidConfiguration, stage: .connecting, detail: "d").kind == .permanent)
        #expect(SMTPError(.malformedReply, stage: .connecting, detail: "d").kind == .protocolViolation)
    }

    @Test func theDescriptionNamesKindCodeStageAndReply() {
        let error = SMTPError(
            .rejected,
            stage: .recipient,
            detail: "the server refused the command",
            reply: SMTPReply(code: 550, lines: ["5.1.1 no"])
        )
        #expect("\(error)" == "SMTP permanent failure (rejected) at RCPT TO: the server refused the command (server: 550 5.1.1 no)")
    }

    @Test func aDropAfterTheMessageSaysItMayHaveBeenAccepted() {
        let error = SMTPError.closed(at: .messageBody)
        #expect(error.kind == .transient)
        #expect("\(error)".contains("may or may not have been accepted"))
    }
}
