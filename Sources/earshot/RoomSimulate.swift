import ArgumentParser
import EarshotCore
import EarshotIO
import EarshotRoom
import Foundation

/// `earshot room simulate --size 5x4x3 --rt60 0.5 --source x,y,z --mic x,y,z -o IR`
struct RoomSimulate: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "simulate",
        abstract: "Simulate a shoebox room's impulse response with the image-source method.",
        discussion: """
            The walls' absorption is chosen so the simulated response decays with the requested \
            T30 (a specular shoebox decays more slowly than Sabine or Eyring predict; both are \
            printed for comparison). Arrivals are delayed by \(ShoeboxRoom.interpolationHalfLength) \
            samples, half the interpolation kernel.
            """)

    @Option(help: "Room dimensions in metres, WxDxH.")
    var size: String

    @Option(help: "Reverberation time in seconds (or give --absorption).")
    var rt60: Double?

    @Option(help: "Energy absorption of every wall, 0–1 (instead of --rt60).")
    var absorption: Double?

    @Option(help: "Source position in metres, x,y,z.")
    var source: String

    @Option(help: "Microphone position in metres, x,y,z.")
    var mic: String

    @Option(help: "Sample rate in Hz.")
    var rate: Double = 16_000

    @Option(help: "Keep only images with at most this many reflections (default: all within the response's length).")
    var maxOrder: Int?

    @Option(name: .shortAndLong, help: "The impulse response file.")
    var output: String

    @Option(help: "Output sample format (default: f32; s24 for FLAC).")
    var sampleFormat: SampleFormat?

    func run() throws {
        let (w, d, h) = try parseTriple(size, separator: "x", name: "--size")
        let (sx, sy, sz) = try parseTriple(source, separator: ",", name: "--source")
        let (mx, my, mz) = try parseTriple(mic, separator: ",", name: "--mic")
        let room: ShoeboxRoom
        switch (rt60, absorption) {
        case (let rt60?, nil): room = try ShoeboxRoom(width: w, depth: d, height: h, rt60: rt60)
        case (nil, let alpha?): room = try ShoeboxRoom(width: w, depth: d, height: h, absorption: alpha)
        default: throw EarshotError.invalidArgument("give exactly one of --rt60 and --absorption")
        }
        let format = try AudioFile.unboundedSampleFormat(for: output, requested: sampleFormat)
        let response = try room.impulseResponse(
            source: RoomPoint(sx, sy, sz), microphone: RoomPoint(mx, my, mz), sampleRate: rate, maxOrder: maxOrder)
        try AudioFile.writeUnclipped([response], to: output, sampleRate: rate, sampleFormat: format)
        let measured = try RoomAnalysis.analyze(response, sampleRate: rate)[0]
        Terminal.note(String(
            format: "Wall absorption %.4f; T30 measured %@ s (image-source prediction %.3f s, Sabine %.3f s, Eyring %.3f s); %.2f s written to %@",
            room.absorption, measured.t30.map { String(format: "%.3f", $0) } ?? "–", room.predictedT30(absorption: room.absorption),
            room.sabineRT60, room.eyringRT60, Double(response.count) / rate, output))
    }
}
