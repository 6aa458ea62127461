"""Generic tabular training script the scripted baseline writes into the sandbox.

Usage: python train.py DATA_DIR SUBMISSION_PATH. It learns the id and target columns from
the sample submission, turns text columns into categories (splitting codes such as
`B/12/P` into parts), adds a few generic features, fits a random forest and writes
predictions in the sample submission's format. A seeded forest on the same features gives
the same predictions across scikit-learn releases, so every sandbox image scores alike.
"""

import sys

import numpy as np
import pandas as pd
from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor
from sklearn.model_selection import cross_val_score

MAX_CATEGORIES = 60


def text_features(name, train_col, test_col):
    """Category codes for a text column, or its parts when it is a delimited code."""
    both = pd.concat([train_col, test_col], ignore_index=True).astype("string")
    if both.nunique() <= MAX_CATEGORIES:
        return {name: both.astype("category").cat.codes.where(both.notna(), np.nan)}
    parts = both.str.split("/", expand=True)
    if parts.shape[1] > 1 and parts.notna().all(axis=1).mean() > 0.9:
        out = {}
        for i in parts.columns:
            numeric = pd.to_numeric(parts[i], errors="coerce")
            if numeric.notna().mean() > 0.9:
                out[f"{name}_{i}"] = numeric
            elif parts[i].nunique() <= MAX_CATEGORIES:
                out[f"{name}_{i}"] = (
                    parts[i].astype("category").cat.codes.where(parts[i].notna(), np.nan)
                )
        return out
    return {}


def build(train, test, id_col, target):
    features = [c for c in test.columns if c != id_col and c in train.columns]
    columns = {}
    for c in features:
        both = pd.concat([train[c], test[c]], ignore_index=True)
        lowered = both.astype("string").str.lower()
        if set(lowered.dropna().unique()) <= {"true", "false"}:
            columns[c] = lowered.map({"true": 1.0, "false": 0.0}).astype(float)
        elif pd.api.types.is_numeric_dtype(both):
            columns[c] = both.astype(float)
        else:
            columns.update(text_features(c, train[c], test[c]))
    frame = pd.DataFrame(columns)
    numeric = [c for c in features if pd.api.types.is_numeric_dtype(train[c])]
    if len(numeric) > 2:
        frame["numeric_sum"] = frame[numeric].fillna(0).sum(axis=1)
        frame["numeric_missing"] = frame[numeric].isna().sum(axis=1)
    ids = pd.concat([train[id_col], test[id_col]], ignore_index=True).astype(str)
    groups = ids.str.split("_").str[0]
    if ids.str.contains("_").mean() > 0.9 and groups.nunique() < len(ids):
        frame["id_group_size"] = groups.map(groups.value_counts()).astype(float)
    return frame.iloc[: len(train)], frame.iloc[len(train) :]


def main(data_dir, submission_path):
    train = pd.read_csv(f"{data_dir}/train.csv")
    test = pd.read_csv(f"{data_dir}/test.csv")
    sample = pd.read_csv(f"{data_dir}/sample_submission.csv")
    id_col, target = sample.columns[0], sample.columns[1]
    x_train, x_test = build(train, test, id_col, target)
    x_train, x_test = x_train.fillna(-1), x_test.fillna(-1)
    y = train[target]
    print(
        f"id column {id_col!r}, target {target!r}, {x_train.shape[1]} features, {len(train)} rows"
    )
    classify = y.dtype == bool or y.dtype == object or y.nunique() <= 20
    forest = RandomForestClassifier if classify else RandomForestRegressor
    model = forest(n_estimators=300, min_samples_leaf=2, random_state=0, n_jobs=-1)
    print("cross-validation:", cross_val_score(model, x_train, y, cv=3).round(4))
    model.fit(x_train, y)
    submission = pd.DataFrame({id_col: test[id_col], target: model.predict(x_test)})
    submission.to_csv(submission_path, index=False)
    print(f"wrote {len(submission)} predictions to {submission_path}")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
