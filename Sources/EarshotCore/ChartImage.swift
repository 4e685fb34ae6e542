import Foundation

/// Charts are drawn as SVG; a PNG is that SVG rendered by rsvg-convert.
public enum ChartImage {
    /// Renders `svg` to a PNG file at `path`, atomically: nothing is left there if rendering fails.
    public static func writePNG(svg: String, to path: String) throws {
        let converter = ["/usr/bin/rsvg-convert", "/usr/local/bin/rsvg-convert", "/opt/homebrew/bin/rsvg-convert"]
            .first { FileManager.default.isExecutableFile(atPath: $0) }
        guard let converter else {
            throw EarshotError.invalidArgument("PNG output needs rsvg-convert (Debian: librsvg2-bin)")
        }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("earshot-png-\(getpid())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let svgPath = directory.appendingPathComponent("chart.svg").path, pngPath = directory.appendingPathComponent("chart.png").path
        try Data(svg.utf8).write(to: URL(fileURLWithPath: svgPath))
        let process = Process()
        process.executableURL = URL(fileURLWithPath: converter)
        process.arguments = ["-o", pngPath, svgPath]
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0, let data = FileManager.default.contents(atPath: pngPath) else {
            throw EarshotError.internalFailure("rsvg-convert could not render the chart")
        }
        try AtomicFile.write(data, to: path)
    }
}
