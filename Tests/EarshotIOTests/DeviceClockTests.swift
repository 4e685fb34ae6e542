import EarshotIO
import Foundation
import Testing

/// How fast a device runs against the computer's clock, from its callbacks alone.
@Suite struct DeviceClockTests {
    /// 60 s of 144-frame callbacks from a device 500 ppm fast, each told the time with up to a
    /// millisecond of jitter: the figure is within 25 ppm; a device on time reads near zero.
    @Test(arguments: [0.0, 500, -300])
    func readsTheRateThroughJitter(ppm: Double) {
        let clock = DeviceClock()
        clock.sampleRate = 48_000
        var random = SystemRandomNumberGenerator()
        let period = 144 / (48_000 * (1 + ppm / 1e6))
        // A stream's start: a burst of callbacks to fill its buffer, then half a second's pause.
        for _ in 0..<8 { clock.count(144, at: 99) }
        for k in 0..<20_000 {
            clock.count(144, at: 99.5 + Double(k) * period + Double.random(in: 0...0.001, using: &random))
        }
        #expect(abs(clock.ppm - ppm) < 25, "\(clock.ppm) ppm for \(ppm)")
    }

    /// Callbacks a whole number of microseconds long: PulseAudio's null sinks count time per
    /// chunk in whole microseconds, and 2.7 ms (130 frames) made one run 500 ppm fast.
    @Test func lowLatencyCallbacksLastWholeMicroseconds() {
        let frames = LiveLatency.low.callbackFrames(sampleRate: 48_000)
        #expect(frames == 144)
        #expect((Double(frames) * 1e6 / 48_000).truncatingRemainder(dividingBy: 1) == 0)
    }
}
