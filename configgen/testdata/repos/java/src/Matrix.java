package fixture;

import java.util.Arrays;

public class Matrix {
    private final double[][] cells;

    public Matrix(int rows, int cols) {
        if (rows <= 0 || cols <= 0) {
            throw new IllegalArgumentException("size");
        }
        cells = new double[rows][cols];
    }

    public double get(int r, int c) {
        return cells[r][c];
    }

    public Matrix multiply(Matrix other) {
        int n = cells.length;
        int m = other.cells[0].length;
        Matrix out = new Matrix(n, m);
        for (int i = 0; i < n; i++) {
            for (int j = 0; j < m; j++) {
                double s = 0;
                for (int k = 0; k < other.cells.length; k++) {
                    s += cells[i][k] * other.cells[k][j];
                }
                out.cells[i][j] = s;
            }
        }
        return out;
    }

    @Override
    public String toString() {
        return Arrays.deepToString(cells);
    }
}
