// Training program for the javac CDS archive in the java image (build-images.sh, java.Dockerfile):
// what javac meets in a typical snippet: generics, lambdas, streams, records, formatting.
import java.util.*;
import java.util.function.*;
import java.util.stream.*;

public class Main {
    record Point(int x, int y) {}

    interface Shape { double area(); }

    static <T extends Comparable<T>> T max(List<T> xs) {
        return xs.stream().max(Comparator.naturalOrder()).orElseThrow();
    }

    public static void main(String[] args) throws Exception {
        List<Integer> xs = new ArrayList<>(List.of(3, 1, 2));
        Collections.sort(xs);
        Map<String, Integer> counts = new HashMap<>();
        for (String w : "a b a".split(" ")) counts.merge(w, 1, Integer::sum);
        Function<Integer, Integer> twice = v -> v * 2;
        Shape s = () -> Math.PI;
        var p = new Point(6, 7);
        String joined = IntStream.range(0, 3).mapToObj(Integer::toString)
                .collect(Collectors.joining(","));
        StringBuilder sb = new StringBuilder();
        try {
            sb.append(String.format("%d %s %.2f %s", max(xs), counts, s.area(), joined));
        } catch (RuntimeException e) {
            throw new IllegalStateException(e);
        }
        if (sb.length() > 0) System.out.println(p.x() * p.y() + twice.apply(0));
    }
}
