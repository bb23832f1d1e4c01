#pragma once

#include "executionresult.h"

#include <QByteArray>
#include <QList>
#include <QString>
#include <QStringList>

// The listing of the files a program left for the caller (the output folder, the figures, and
// the image files it saved at the top of its working directory), written by the container's
// supervisor after the program ended, and what of it is fetched.
//
// The listing is what makes fetching safe: a file's size in the engine's archive is what the
// file claims (a sparse file of 64 GiB costs the sandbox nothing and would stream 64 GiB), so
// the server decides from the listing what fits its budget and asks the engine only for that,
// with every archive capped at what the listing promised. The listing comes from the sandbox
// and is not trusted for anything but that choice: a listing that lies only makes a capped fetch
// fail.
class OutputManifest
{
public:
    // Where the supervisor writes it (in the workdir volume, which the archive endpoint reaches),
    // as NUL-terminated records "<type> <size> <path>": type as find's %y (f, d, l, ...), size in
    // bytes, path relative to the workdir ("outputs/table.csv", ".plots/figure-0001.png",
    // "chart.png").
    static constexpr const char *kPath = "/sandbox/.cs-files";
    // The supervisor lists at most this many entries; a full listing says there were more.
    static constexpr int kMaxRecords = 20000;
    // The listing's own archive is read up to this many bytes.
    static constexpr qint64 kMaxBytes = 4 * 1024 * 1024;
    // A folder with more directories and links than this is fetched file by file.
    static constexpr int kMaxOtherEntries = 1000;

    struct Limits
    {
        qint64 perFile = 5LL * 1024 * 1024;
        qint64 total = 20LL * 1024 * 1024;
        int maxFiles = 100;   // files returned with content per run (empty ones count)
        int maxListed = 1000; // files named in the result, returned or not
    };

    struct Entry
    {
        OutputFile::Kind kind = OutputFile::Kind::Output;
        QString path; // relative to the workdir, as listed
        QString name; // as the result names it: relative to its folder
        qint64 size = 0;
        bool selected = false; // within every limit: to be fetched
        // An image file at the top of the workdir (an output, named as it is there): fetched on
        // its own, never with a folder.
        bool inWorkdir = false;
    };

    // Whether a listed path is one of the image files at the top of the workdir that come back
    // like output files (chart.png, out.JPG; not hidden): the supervisors list those that the
    // run created or changed, with these suffixes.
    static bool isWorkdirImage(const QString &path);

    // Parses the listing and chooses, in result order (figures, then outputs by name), the files
    // that fit `limits`. Directories and links are skipped, and so is anything that is neither
    // in the two folders nor an image file at the top of the workdir, or a workdir image named
    // like a file of the output folder (which the program put there for the caller).
    static OutputManifest parse(const QByteArray &listing, const Limits &limits);

    bool isEmpty() const { return m_files.isEmpty(); }
    // Whether the listing named anything at all (files, directories, links) in the two folders.
    bool hasEntries() const;
    const QList<Entry> &files() const { return m_files; }
    // Whether every file of `kind`'s folder was selected, so that one archive of the folder
    // holds exactly what is wanted.
    bool wholeFolder(OutputFile::Kind kind) const;
    // What an archive of `kind`'s whole folder may be at most (when wholeFolder()): the selected
    // files' sizes plus a tar header for each listed entry; at most the run's file budget and
    // kMaxOtherEntries + 100 headers.
    qint64 folderArchiveBytes(OutputFile::Kind kind) const;
    // What an archive of one file may be at most.
    static qint64 fileArchiveBytes(qint64 size);

    // The files named in the result: every selected one, then others up to maxListed, with
    // included = false; each unselected file has its reason in notes(). `paths`: where each is,
    // as listed.
    QList<OutputFile> listed(QStringList *paths = nullptr) const;
    QStringList notes() const { return m_notes; }

private:
    class Reason;

    // Reads the records into m_files (up to kMaxRecords); returns how many there were.
    int read(const QByteArray &listing);
    // Drops the workdir images named like an output file; returns a note for each.
    QStringList dropShadowedImages();
    // Selects what fits, notes why the rest does not; true for those left out by count alone.
    QList<bool> choose(const Limits &limits);
    // Which files the result names (m_listed), and a note for those it does not.
    void chooseListed(const Limits &limits, const QList<bool> &byCount);

    QList<Entry> m_files;
    int m_selected = 0;
    QStringList m_notes;
    QList<int> m_listed;            // indexes into m_files
    int m_otherEntries[2] = {0, 0}; // directories and links per folder (they cost tar headers)
};
