import Foundation
import XCTest
@testable import ArchiverCore

/// Every decision of a fetch operation, event by event: no threads, sockets or timers.
final class FetchStateMachineTests: XCTestCase {
    private let unavailable = ItemError.httpStatus(503, url: "http://h/a")
    private let notFound = ItemError.httpStatus(404, url: "http://h/a")
    private let down = ItemError.hostDown(host: "http://h", reason: "refused", url: "http://h/a")
    private let body = FetchOutcome.body(Data([1, 2, 3]), finalURL: "http://h/a", validators: Validators(etag: "\"e\""))

    private func machine(_ count: Int, retries: Int = 2, maxRetryAfter: Double = 60) -> FetchStateMachine {
        FetchStateMachine(
            count: count,
            policy: .init(retries: retries, maxRetryAfter: maxRetryAfter, backoff: Backoff(base: 0.25, cap: 8, jitter: { 1 })))
    }

    /// A step as text: what ended, then the command (`-` for none).
    private func text(_ step: FetchStateMachine.Step) -> String {
        let ended: String
        switch step.ended {
        case nil: ended = "-"
        case .pending(let index, let requests): ended = "pending \(index) after \(requests)"
        case .unchanged(let index, let requests): ended = "unchanged \(index) after \(requests)"
        case .deliver(let index, let attempts, .body(let data, let validators)):
            ended = "body \(index) after \(attempts): \(data.count) bytes, etag \(validators.etag ?? "none")"
        case .deliver(let index, let attempts, .failed(let error, let note)):
            ended = "failed \(index) after \(attempts): \(error.kind)" + (note.map { " (\($0))" } ?? "")
        }
        let command: String
        switch step.command {
        case .none: command = "-"
        case .gate(let index, let attempt): command = "gate \(index)#\(attempt)"
        case .send(let index, let attempt): command = "send \(index)#\(attempt)"
        case .wait(let seconds, let ticket): command = "wait \(seconds) s, ticket \(ticket)"
        case .cancelRequest: command = "cancel request"
        case .finish: command = "finish"
        }
        return "\(ended) / \(command)"
    }

    func testEachURLIsGatedSentAndDeliveredThenTheOperationFinishesOnceAllAreJournaled() {
        var machine = machine(2)
        XCTAssertEqual(text(machine.start()), "- / gate 0#1")
        XCTAssertEqual(text(machine.gated(.open)), "- / send 0#1")
        XCTAssertTrue(machine.isInFlight(index: 0, attempt: 1))
        XCTAssertEqual(text(machine.answered(body)), "body 0 after 1: 3 bytes, etag \"e\" / gate 1#1")
        XCTAssertEqual(text(machine.gated(.open)), "- / send 1#1")
        XCTAssertEqual(text(machine.answered(body)), "body 1 after 1: 3 bytes, etag \"e\" / -")
        XCTAssertEqual(machine.unjournaled, 2)
        XCTAssertEqual(text(machine.journaled()), "- / -")
        XCTAssertFalse(machine.isFinished)
        XCTAssertEqual(text(machine.journaled()), "- / finish")
        XCTAssertTrue(machine.isFinished)
    }

    func testAtMostThreeURLsAreBetweenRequestAndJournalLine() {
        var machine = machine(5)
        _ = machine.start()
        for index in 0..<3 {
            XCTAssertEqual(text(machine.gated(.open)), "- / send \(index)#1")
            let next = index < 2 ? "gate \(index + 1)#1" : "-"
            XCTAssertEqual(text(machine.answered(body)), "body \(index) after 1: 3 bytes, etag \"e\" / \(next)")
        }
        XCTAssertEqual(machine.unjournaled, 3)
        XCTAssertEqual(text(machine.journaled()), "- / gate 3#1", "a journal line frees the lane")
        XCTAssertEqual(text(machine.journaled()), "- / -", "one URL under way at a time")
    }

    func testA304EndsTheURLWithoutAJournalLine() {
        var machine = machine(1)
        _ = machine.start()
        _ = machine.gated(.open)
        XCTAssertEqual(text(machine.answered(.notModified)), "unchanged 0 after 1 / finish")
        XCTAssertEqual(machine.unjournaled, 0)
    }

    func testARetriableFailureWaitsItsBackoffThenIsGatedAgainUntilRetriesRunOut() {
        var machine = machine(1, retries: 2)
        _ = machine.start()
        _ = machine.gated(.open)
        XCTAssertEqual(text(machine.answered(.failed(unavailable, retryAfter: nil))), "- / wait 0.25 s, ticket 1")
        XCTAssertEqual(text(machine.timerFired(1)), "- / gate 0#2")
        XCTAssertEqual(text(machine.gated(.open)), "- / send 0#2")
        XCTAssertEqual(text(machine.answered(.failed(unavailable, retryAfter: 2))), "- / wait 2.0 s, ticket 2")
        XCTAssertEqual(text(machine.timerFired(1)), "- / -", "a stale ticket does nothing")
        XCTAssertEqual(text(machine.timerFired(2)), "- / gate 0#3")
        _ = machine.gated(.open)
        XCTAssertEqual(text(machine.answered(.failed(unavailable, retryAfter: nil))), "failed 0 after 3: http-status / -")
        XCTAssertEqual(text(machine.journaled()), "- / finish")
    }

    func testAFailureThatCannotClearUpIsDeliveredAtOnce() {
        var machine = machine(1)
        _ = machine.start()
        _ = machine.gated(.open)
        XCTAssertEqual(text(machine.answered(.failed(notFound, retryAfter: nil))), "failed 0 after 1: http-status / -")
        XCTAssertEqual(text(machine.journaled()), "- / finish")
    }

    func testARetryAfterBeyondTheCapFailsWithANoteInsteadOfWaiting() {
        var machine = machine(1, maxRetryAfter: 60)
        _ = machine.start()
        _ = machine.gated(.open)
        XCTAssertEqual(
            text(machine.answered(.failed(unavailable, retryAfter: 120.5))),
            "failed 0 after 1: http-status (Retry-After 120.5 s is beyond the 60 s cap) / -")
    }

    func testADownHostFailsAURLBeforeItsFirstRequestAndBeforeARetry() {
        var machine = machine(3)
        _ = machine.start()
        XCTAssertEqual(text(machine.gated(.hostDown(down))), "failed 0 after 0: host-down / gate 1#1")
        _ = machine.gated(.open)
        XCTAssertEqual(
            text(machine.answered(.failed(unavailable, retryAfter: nil), hostDown: down)), "failed 1 after 1: host-down / gate 2#1")
        _ = machine.gated(.open)
        _ = machine.answered(.failed(unavailable, retryAfter: nil))
        XCTAssertEqual(text(machine.timerFired(1)), "- / gate 2#2")
        XCTAssertEqual(text(machine.gated(.hostDown(down))), "failed 2 after 1: host-down / -")
    }

    func testTheRateLimitersWaitEndsInTheRequestWithoutAnotherGate() {
        var machine = machine(1)
        _ = machine.start()
        XCTAssertEqual(text(machine.gated(.wait(0.5))), "- / wait 0.5 s, ticket 1")
        XCTAssertEqual(text(machine.timerFired(1)), "- / send 0#1")
        XCTAssertTrue(machine.isInFlight(index: 0, attempt: 1))
    }

    func testCancelWhileWaitingLeavesTheURLPendingAndFinishes() {
        var machine = machine(3, maxRetryAfter: 300)
        _ = machine.start()
        _ = machine.gated(.open)
        XCTAssertEqual(text(machine.answered(.failed(unavailable, retryAfter: 100))), "- / wait 100.0 s, ticket 1")
        XCTAssertEqual(text(machine.cancel()), "pending 0 after 1 / finish")
        XCTAssertEqual(text(machine.timerFired(1)), "- / -", "the timer of a cancelled wait does nothing")

        var limited = self.machine(1)
        _ = limited.start()
        _ = limited.gated(.wait(0.5))
        XCTAssertEqual(text(limited.cancel()), "pending 0 after 0 / finish", "the rate limiter's wait sent nothing")
    }

    func testCancelInFlightCancelsTheRequestAndARetriableFailureThenStaysPending() {
        var machine = machine(2)
        _ = machine.start()
        _ = machine.gated(.open)
        XCTAssertEqual(text(machine.cancel()), "- / cancel request")
        XCTAssertEqual(text(machine.answered(.failed(unavailable, retryAfter: nil))), "pending 0 after 1 / finish")

        var cancelled = self.machine(2)
        _ = cancelled.start()
        _ = cancelled.gated(.open)
        _ = cancelled.cancel()
        XCTAssertEqual(text(cancelled.answered(.cancelled)), "pending 0 after 1 / finish")
    }

    func testABodyThatArrivesDespiteACancelIsStillDelivered() {
        var machine = machine(2)
        _ = machine.start()
        _ = machine.gated(.open)
        _ = machine.cancel()
        XCTAssertEqual(text(machine.answered(body)), "body 0 after 1: 3 bytes, etag \"e\" / -", "finishes once journaled")
        XCTAssertEqual(text(machine.journaled()), "- / finish")
    }

    func testCancelBetweenStepsEndsTheURLPendingAtItsGate() {
        var machine = machine(2)
        _ = machine.start()
        XCTAssertEqual(text(machine.cancel()), "- / -")
        XCTAssertEqual(text(machine.gated(.open)), "pending 0 after 0 / finish")
    }

    func testCancelWhileIdleFinishesOnlyOnceEveryDeliveryIsJournaled() {
        var machine = machine(5)
        _ = machine.start()
        for _ in 0..<3 {
            _ = machine.gated(.open)
            _ = machine.answered(body)
        }
        XCTAssertEqual(text(machine.cancel()), "- / -")
        XCTAssertEqual(text(machine.journaled()), "- / -")
        XCTAssertEqual(text(machine.journaled()), "- / -")
        XCTAssertEqual(text(machine.journaled()), "- / finish")
        XCTAssertEqual(text(machine.cancel()), "- / -", "finished for good")
    }

    func testAnOperationCancelledBeforeItStartsFinishesWithoutARequest() {
        var machine = machine(4)
        XCTAssertEqual(text(machine.cancel()), "- / -")
        XCTAssertEqual(text(machine.start()), "- / finish")
        XCTAssertEqual(text(machine.start()), "- / -")
    }

    func testAnAnswerNotForTheRequestInFlightIsIgnored() {
        var machine = machine(1)
        _ = machine.start()
        XCTAssertEqual(text(machine.answered(body)), "- / -")
        XCTAssertEqual(text(machine.timerFired(1)), "- / -")
        XCTAssertEqual(text(machine.gated(.open)), "- / send 0#1")
        XCTAssertEqual(text(machine.gated(.open)), "- / -")
    }
}
