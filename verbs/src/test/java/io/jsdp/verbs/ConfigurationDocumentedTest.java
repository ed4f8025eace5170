package io.jsdp.verbs;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Every {@code jsdp.*} property the main code names is documented in docs/configuration.md (style habit 10). */
@Timeout(30)
class ConfigurationDocumentedTest {
    private static final Pattern PROPERTY = Pattern.compile("\"(jsdp\\.[A-Za-z0-9_.]+[A-Za-z0-9_])\"");

    @Test
    void everyPropertyInMainCodeIsInTheConfigurationDoc() throws IOException {
        Path root = Path.of("").toAbsolutePath().getParent();
        Path doc = root.resolve("docs/configuration.md");
        assertTrue(Files.isRegularFile(doc), "missing " + doc);
        String text = Files.readString(doc);
        Set<String> properties = new TreeSet<>();
        try (Stream<Path> files = Files.walk(root)) {
            files.filter(p -> p.toString().endsWith(".java") && p.toString().contains("/src/main/java/"))
                .forEach(p -> {
                    try {
                        Matcher m = PROPERTY.matcher(Files.readString(p));
                        while (m.find()) {
                            properties.add(m.group(1));
                        }
                    } catch (IOException e) {
                        throw new UncheckedIOException(e);
                    }
                });
        }
        assertTrue(properties.contains("jsdp.device"), "the scan found the device property: " + properties);
        Set<String> missing = new TreeSet<>();
        for (String p : properties) {
            if (!text.contains("`" + p + "`")) {
                missing.add(p);
            }
        }
        assertTrue(missing.isEmpty(), "properties missing from docs/configuration.md: " + missing);
    }
}
